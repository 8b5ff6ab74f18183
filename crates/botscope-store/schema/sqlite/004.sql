-- 4: the crawl a run imported (`CC-MAIN-2024-10`), so that each capture
-- belongs to its crawl; trends by crawl count the sites each one saw.
ALTER TABLE runs ADD COLUMN crawl TEXT;
CREATE INDEX runs_crawl ON runs(crawl) WHERE crawl IS NOT NULL;
