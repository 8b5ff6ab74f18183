-- 3: where the import of each input (a WARC file or URL) stands, written
-- in the transaction of its records, so that an import resumes without
-- duplicates; and the crawl it belongs to.
CREATE TABLE imports (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    crawl TEXT,
    run_id INTEGER REFERENCES runs(id),
    records INTEGER NOT NULL,
    robots INTEGER NOT NULL,
    finished INTEGER
);
