-- 4: the workers at work, each with its last sign of life (server
-- milliseconds): addresses are shared out among them.
-- The key of the address a host had when last fetched, by which
-- claims prefer the hosts of the claimer's own addresses.
CREATE TABLE frontier_workers (
    worker TEXT PRIMARY KEY,
    seen BIGINT NOT NULL
) WITH (fillfactor = 50);
ALTER TABLE frontier ADD COLUMN address_key BIGINT;
