-- v23: the browser app's sign-ins, one row each. The session cookie holds only a random token;
-- this row is who it signs in (platform, workspace, user, name), whether the platform said they
-- are an admin and when that was last asked, and until when it holds. Signing out, an admin's
-- demotion and `council web --revoke` set `revoked_at`: the cookie then signs nobody in, whatever
-- its signature. `token_hash` is the SHA-256 of the token, so that a copy of the database signs
-- nobody in. Times are seconds since the epoch. Plain SQL that SQLite and PostgreSQL both accept.
CREATE TABLE web_sessions (
    token_hash TEXT PRIMARY KEY,
    platform TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT NOT NULL,
    admin INTEGER NOT NULL DEFAULT 0,
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    admin_checked_at DOUBLE PRECISION NOT NULL,
    revoked_at DOUBLE PRECISION
);
CREATE INDEX web_sessions_user ON web_sessions (user_id);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
