-- 2: where each version comes from; the change mark the research
-- index follows.
ALTER TABLE versions ADD COLUMN source TEXT NOT NULL DEFAULT 'harvest';
ALTER TABLE sites ADD COLUMN changed INTEGER NOT NULL DEFAULT 0;
UPDATE sites SET changed = 1 WHERE id IN (SELECT site_id FROM versions);
CREATE INDEX sites_changed ON sites(changed);
