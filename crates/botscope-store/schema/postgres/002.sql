-- 2: the shared frontier of harvest workers (docs/harvest.md). Small
-- rows updated in place; autovacuum clears a busy queue's dead rows
-- early.
CREATE TABLE frontier (
    host TEXT PRIMARY KEY,
    rank BIGINT,
    due BIGINT NOT NULL,
    lease_worker TEXT,
    lease_until BIGINT,
    failures INTEGER NOT NULL DEFAULT 0,
    last_done BIGINT,
    changed BOOLEAN NOT NULL DEFAULT false
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
CREATE INDEX frontier_due ON frontier (due, rank);
CREATE TABLE frontier_addresses (
    address TEXT PRIMARY KEY,
    worker TEXT,
    lease_until BIGINT,
    next_ms BIGINT NOT NULL DEFAULT 0
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01);
