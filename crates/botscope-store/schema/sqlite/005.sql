-- 5: each crawl's sites kept as it is imported: its last capture of each
-- site (at one second, one that brought a file) and whether it found a
-- robots.txt, and per crawl its span and its count of sites, so that
-- trends by crawl and the index read them without scanning attempts.
CREATE TABLE crawl_sites (
    crawl TEXT NOT NULL,
    site_id INTEGER NOT NULL REFERENCES sites(id),
    time INTEGER NOT NULL,
    found INTEGER NOT NULL,
    PRIMARY KEY (site_id, crawl)
) WITHOUT ROWID;
CREATE TABLE crawl_counts (
    crawl TEXT PRIMARY KEY,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    sites INTEGER NOT NULL
);
