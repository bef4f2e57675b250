-- v20: refine mode's revision rounds (core/engine/rounds.py). One row per member and round: its
-- answer after the round (its previous one when it held or failed), whether it kept its answer or
-- moved (measured, core/engine/revision_moves.py), the members it moved toward (a JSON list of
-- model ids), its reason as it said it, and the call's cost. The first answers stay in `answers`.
-- Plain SQL that SQLite and PostgreSQL both accept.
CREATE TABLE revisions (
    council_id TEXT NOT NULL REFERENCES councils (id) ON DELETE CASCADE,
    round INTEGER NOT NULL,
    position INTEGER NOT NULL,
    seat TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT,
    kept INTEGER NOT NULL DEFAULT 0,
    moved INTEGER NOT NULL DEFAULT 0,
    toward TEXT NOT NULL,
    new_share DOUBLE PRECISION,
    reason TEXT,
    error_kind TEXT,
    error_message TEXT,
    error_status INTEGER,
    latency_s DOUBLE PRECISION,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd DOUBLE PRECISION,
    PRIMARY KEY (council_id, round, position)
);
CREATE INDEX revisions_model ON revisions (model);
