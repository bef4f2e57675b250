-- v9: durable councils (a job queue on PostgreSQL, a restart on SQLite). A council that can be
-- resumed has a council_jobs row: its full request (files, sources) and where its answer goes.
-- Each completed step is kept in council_steps as it completes (stage-1 answers, stage-2
-- reviews), so another worker resumes from there without calling those models again; the rows
-- go with the council's row when its result is stored. council_deliveries is claimed (primary
-- key) before the answer is posted: it is posted once whichever worker finishes the council.
-- council_jobs and council_deliveries do not reference councils: storing a result replaces the
-- council's row (and its cascading children), and both must outlive that.
-- Times are Unix seconds (DOUBLE PRECISION, REAL on SQLite).
CREATE TABLE council_jobs (
    council_id TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    destination TEXT,
    search INTEGER NOT NULL DEFAULT 0,
    prepared INTEGER NOT NULL DEFAULT 0,
    control TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE council_steps (
    council_id TEXT NOT NULL REFERENCES councils (id) ON DELETE CASCADE,
    stage INTEGER NOT NULL,
    step_key TEXT NOT NULL,
    payload TEXT NOT NULL,
    saved_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (council_id, stage, step_key)
);
CREATE TABLE council_deliveries (
    council_id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    delivered_at DOUBLE PRECISION NOT NULL
);
