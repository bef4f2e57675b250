-- Schema v1. `schema_version` itself is created by the runner in core/storage.py.
-- Times are UTC ISO-8601 text with microseconds (text order is time order), except
-- processed_events.at and rate_hits.at, which are Unix seconds (REAL).
-- No secret is ever stored: `config` is the CouncilConfig snapshot (model ids and knobs).
-- An applied migration is never edited: change the schema with a new numbered file.

-- Councils and everything they produced. The full result is also kept as JSON (`result`)
-- so a council round-trips exactly; the normalised tables serve history, leaderboards and SQL users.
CREATE TABLE councils (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    question TEXT NOT NULL,
    history TEXT NOT NULL DEFAULT '[]',
    platform TEXT NOT NULL,
    workspace_id TEXT,
    channel_id TEXT,
    channel_key TEXT NOT NULL,
    thread_id TEXT,
    user_id TEXT,
    user_name TEXT,
    members TEXT NOT NULL,
    chairman TEXT NOT NULL,
    config TEXT NOT NULL,
    winner TEXT,
    agreement_w REAL,
    error TEXT,
    notices TEXT NOT NULL DEFAULT '[]',
    timings TEXT NOT NULL DEFAULT '{}',
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    duration_s REAL,
    result TEXT
);
CREATE INDEX councils_created ON councils (created_at);
CREATE INDEX councils_channel ON councils (platform, workspace_id, channel_id, created_at);
CREATE INDEX councils_user ON councils (platform, workspace_id, user_id, created_at);
CREATE INDEX councils_channel_key ON councils (channel_key, created_at);
CREATE INDEX councils_status ON councils (status);

CREATE TABLE answers (
    council_id TEXT NOT NULL REFERENCES councils (id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    label TEXT,
    text TEXT,
    error_kind TEXT,
    error_message TEXT,
    error_status INTEGER,
    latency_s REAL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL
);
CREATE INDEX answers_council ON answers (council_id);
CREATE INDEX answers_model ON answers (model);

CREATE TABLE reviews (
    council_id TEXT NOT NULL REFERENCES councils (id) ON DELETE CASCADE,
    reviewer TEXT NOT NULL,
    text TEXT,
    shown_labels TEXT NOT NULL,
    ballot_labels TEXT NOT NULL,
    ballot_models TEXT NOT NULL,
    parse_status TEXT NOT NULL,
    error_kind TEXT,
    error_message TEXT,
    error_status INTEGER,
    latency_s REAL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL
);
CREATE INDEX reviews_council ON reviews (council_id);

CREATE TABLE label_map (
    council_id TEXT NOT NULL REFERENCES councils (id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    model TEXT NOT NULL,
    PRIMARY KEY (council_id, label)
);

CREATE TABLE aggregates (
    council_id TEXT NOT NULL REFERENCES councils (id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    label TEXT,
    position INTEGER NOT NULL,
    average_rank REAL,
    rankings_count INTEGER NOT NULL,
    borda REAL NOT NULL,
    condorcet_wins REAL NOT NULL,
    first_place_votes INTEGER NOT NULL
);
CREATE INDEX aggregates_council ON aggregates (council_id);
CREATE INDEX aggregates_model ON aggregates (model);

CREATE TABLE synthesis (
    council_id TEXT PRIMARY KEY REFERENCES councils (id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    by_chairman INTEGER NOT NULL,
    note TEXT,
    latency_s REAL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL
);

CREATE TABLE channel_settings (
    channel_key TEXT PRIMARY KEY,
    members TEXT,
    chairman TEXT,
    user_limit_per_hour INTEGER,
    channel_limit_per_hour INTEGER,
    daily_budget_usd REAL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);

CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    channel_key TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    action TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX audit_channel ON audit_log (channel_key, id);

-- Platform event ids already handled: Slack retries and Discord replays start nothing twice.
CREATE TABLE processed_events (
    platform TEXT NOT NULL,
    event_id TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (platform, event_id)
);

-- Rate-limit hits, persisted so that a restart does not reset anyone's window.
CREATE TABLE rate_hits (
    key TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX rate_hits_key ON rate_hits (key, at);
