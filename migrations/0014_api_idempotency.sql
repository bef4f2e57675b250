-- v14: the API's Idempotency-Key header. A request that repeats a key its caller used within 24 h
-- gets that key's council instead of starting another (a client's retry must not pay for a
-- second council). `scope` is the caller (the key's name, or a trusted front end's end user),
-- `fingerprint` a hash of the request body (the same key with another body is refused), and
-- `created_at` seconds since the epoch. No reference to councils: a council is stored
-- again when it ends (which replaces its row), and the key must hold meanwhile. Plain SQL that
-- SQLite and PostgreSQL both accept.
CREATE TABLE api_idempotency (
    scope TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    council_id TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (scope, idem_key)
);
CREATE INDEX api_idempotency_created ON api_idempotency (created_at);
