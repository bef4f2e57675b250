-- v12: `council eval` runs (core/eval/session.py) and their samples, each stored as it is scored
-- so that an interrupted run continues where it stopped (the same command, same fingerprint).
-- eval_runs.plan is the run's settled choices as JSON (seats, chairman, scorer, judge, the
-- self-consistency model and its sample count once known); report is the last report's JSON.
-- Times are Unix seconds (DOUBLE PRECISION, REAL on SQLite). Plain SQL both dialects accept.
CREATE TABLE eval_runs (
    id TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    dataset TEXT NOT NULL,
    items INTEGER NOT NULL,
    configs TEXT NOT NULL,
    plan TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'abandoned')),
    report TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    finished_at DOUBLE PRECISION
);
CREATE INDEX eval_runs_fingerprint ON eval_runs (fingerprint, status);
CREATE TABLE eval_samples (
    run_id TEXT NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    config TEXT NOT NULL,
    item_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    answer TEXT NOT NULL,
    correct INTEGER NOT NULL,
    calls INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd DOUBLE PRECISION,
    latency_s DOUBLE PRECISION NOT NULL,
    escalated INTEGER,
    error TEXT,
    scored_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, config, item_id)
);
