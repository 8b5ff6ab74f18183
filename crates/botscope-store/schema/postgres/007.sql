-- 7: each crawl's sites kept as it is imported: its last capture of each
-- site (at one second, one that brought a file) and whether it found a
-- robots.txt, and per crawl its span and its count of sites, so that
-- trends by crawl and the index read them without scanning attempts.
CREATE TABLE crawl_sites (
    crawl TEXT NOT NULL,
    site_id BIGINT NOT NULL REFERENCES sites(id),
    time BIGINT NOT NULL,
    found BOOLEAN NOT NULL,
    PRIMARY KEY (site_id, crawl)
);
CREATE TABLE crawl_counts (
    crawl TEXT PRIMARY KEY,
    first BIGINT NOT NULL,
    last BIGINT NOT NULL,
    sites BIGINT NOT NULL
);
