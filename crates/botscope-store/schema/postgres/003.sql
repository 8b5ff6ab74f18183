-- 3: when another worker last asked for an address its holder keeps
-- (milliseconds since the epoch), so that the holder lets it go; and
-- hosts handed to the worker that holds their address.
ALTER TABLE frontier_addresses ADD COLUMN wanted BIGINT NOT NULL DEFAULT 0;
ALTER TABLE frontier ADD COLUMN forwarded BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE frontier ADD COLUMN forward_address TEXT;
CREATE INDEX frontier_forwarded ON frontier (lease_worker) WHERE forwarded;
