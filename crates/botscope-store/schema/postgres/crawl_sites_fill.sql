-- The crawls' sites and counts made again from the attempts (migration 7,
-- and after `store copy`, which copies the attempts).
DELETE FROM crawl_sites;
DELETE FROM crawl_counts;
INSERT INTO crawl_sites(crawl, site_id, time, found)
SELECT crawl, site_id, time, found FROM (
    SELECT r.crawl AS crawl, a.site_id AS site_id, a.time AS time,
        a.body_hash IS NOT NULL AS found,
        row_number() OVER (PARTITION BY r.crawl, a.site_id
            ORDER BY a.time DESC, (a.body_hash IS NOT NULL) DESC) AS n
    FROM attempts a JOIN runs r ON r.id = a.run_id
    WHERE r.crawl IS NOT NULL
) x WHERE n = 1;
INSERT INTO crawl_counts(crawl, first, last, sites)
SELECT r.crawl, min(a.time), max(a.time), count(DISTINCT a.site_id)
FROM runs r JOIN attempts a ON a.run_id = r.id
WHERE r.crawl IS NOT NULL GROUP BY r.crawl;
