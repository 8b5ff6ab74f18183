-- 1: sites, runs, attempts, bodies, versions.
CREATE TABLE sites (
    id INTEGER PRIMARY KEY,
    host TEXT NOT NULL UNIQUE,
    rank INTEGER,
    added INTEGER NOT NULL,
    last_attempt INTEGER,
    last_outcome TEXT,
    last_status INTEGER,
    last_error_class TEXT,
    unreachable_since INTEGER,
    has_copy INTEGER NOT NULL DEFAULT 0,
    etag TEXT,
    last_modified TEXT,
    retry_at INTEGER
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started INTEGER NOT NULL,
    finished INTEGER,
    input TEXT NOT NULL,
    input_hash BLOB NOT NULL,
    user_agent TEXT NOT NULL,
    hosts INTEGER NOT NULL
);
CREATE TABLE bodies (
    hash BLOB PRIMARY KEY,
    size INTEGER NOT NULL,
    content BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE attempts (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs(id),
    site_id INTEGER NOT NULL REFERENCES sites(id),
    time INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
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
    bytes INTEGER NOT NULL,
    truncated INTEGER NOT NULL,
    error_class TEXT,
    error TEXT,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    expires_in INTEGER,
    body_hash BLOB REFERENCES bodies(hash)
);
CREATE INDEX attempts_site ON attempts(site_id, time);
CREATE INDEX attempts_run ON attempts(run_id);
CREATE TABLE versions (
    id INTEGER PRIMARY KEY,
    site_id INTEGER NOT NULL REFERENCES sites(id),
    hash BLOB NOT NULL REFERENCES bodies(hash),
    url TEXT NOT NULL,
    content_type TEXT,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL
);
CREATE INDEX versions_site ON versions(site_id, first_seen);
