-- 5: where the import of each input (a WARC file or URL) stands, written
-- in the transaction of its records, so that an import resumes without
-- duplicates; and the crawl it belongs to.
CREATE TABLE imports (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    crawl TEXT,
    run_id BIGINT REFERENCES runs(id),
    records BIGINT NOT NULL,
    robots BIGINT NOT NULL,
    finished BIGINT
);
