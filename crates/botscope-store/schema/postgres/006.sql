-- 6: the crawl a run imported (`CC-MAIN-2024-10`), so that each capture
-- belongs to its crawl; trends by crawl count the sites each one saw.
ALTER TABLE runs ADD COLUMN crawl TEXT;
CREATE INDEX runs_crawl ON runs(crawl) WHERE crawl IS NOT NULL;
-- The last change mark given, counted here: taken from the sites' greatest
-- mark, a batch that changed every site would reuse it.
CREATE TABLE change_marks (mark BIGINT NOT NULL);
INSERT INTO change_marks SELECT coalesce(max(changed), 0) FROM sites;
