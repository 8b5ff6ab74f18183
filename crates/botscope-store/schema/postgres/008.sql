-- 8: a crawl's sights carry the change mark of the last batch that
-- touched them, so the index rewrites a crawl's membership when the crawl
-- changed instead of reindexing every site it saw.
ALTER TABLE crawl_counts ADD COLUMN changed BIGINT NOT NULL DEFAULT 0;
UPDATE crawl_counts SET changed = (SELECT coalesce(max(changed), 0) FROM sites);
