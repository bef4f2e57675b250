-- v5: what the people who read an answer thought of it. One vote per user per council (a second
-- click changes it), with an optional comment ("what was wrong?"). Plain SQL that SQLite and
-- PostgreSQL both accept. Times are UTC ISO-8601 text, like councils.created_at.
CREATE TABLE council_feedback (
    council_id TEXT NOT NULL REFERENCES councils (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    user_name TEXT,
    vote TEXT NOT NULL CHECK (vote IN ('good', 'bad')),
    comment TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (council_id, user_id)
);
CREATE INDEX council_feedback_updated ON council_feedback (updated_at);
