-- 1: everything SQLite's schema 2 has.
CREATE TABLE sites (
    id BIGSERIAL PRIMARY KEY,
    host TEXT NOT NULL UNIQUE,
    rank BIGINT,
    added BIGINT NOT NULL,
    last_attempt BIGINT,
    last_outcome TEXT,
    last_status INTEGER,
    last_error_class TEXT,
    unreachable_since BIGINT,
    has_copy BOOLEAN NOT NULL DEFAULT false,
    etag TEXT,
    last_modified TEXT,
    retry_at BIGINT,
    changed BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX sites_changed ON sites(changed);
CREATE TABLE runs (
    id BIGSERIAL PRIMARY KEY,
    started BIGINT NOT NULL,
    finished BIGINT,
    input TEXT NOT NULL,
    input_hash BYTEA NOT NULL,
    user_agent TEXT NOT NULL,
    hosts BIGINT NOT NULL
);
CREATE TABLE bodies (
    hash BYTEA PRIMARY KEY,
    size BIGINT NOT NULL,
    content BYTEA NOT NULL
);
CREATE TABLE attempts (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT REFERENCES runs(id),
    site_id BIGINT NOT NULL REFERENCES sites(id),
    time BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    url TEXT NOT NULL,
    redirects TEXT NOT NULL,
    address TEXT,
    status INTEGER,
    content_type TEXT,
    cache_control TEXT,
    expires TEXT,
    retry_after TEXT,
    last_modified TEXT,
    etag TEXT,
    bytes BIGINT NOT NULL,
    truncated BOOLEAN NOT NULL,
    error_class TEXT,
    error TEXT,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    expires_in BIGINT,
    body_hash BYTEA REFERENCES bodies(hash)
);
CREATE INDEX attempts_site ON attempts(site_id, time);
CREATE INDEX attempts_run ON attempts(run_id);
CREATE TABLE versions (
    id BIGSERIAL PRIMARY KEY,
    site_id BIGINT NOT NULL REFERENCES sites(id),
    hash BYTEA NOT NULL REFERENCES bodies(hash),
    url TEXT NOT NULL,
    content_type TEXT,
    first_seen BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    source TEXT NOT NULL DEFAULT 'harvest'
);
CREATE INDEX versions_site ON versions(site_id, first_seen);
