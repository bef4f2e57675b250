-- PostgreSQL variant of ../0003_council_owners.sql (same table and columns): REAL is a 4-byte
-- float here, far too coarse for Unix seconds, so the times are DOUBLE PRECISION.
-- v3: a running council belongs to the process instance that runs it. Each such process holds a
-- lease in council_owners that it renews while it lives; councils.owner_id names the owner. Only
-- running councils whose owner is gone (no row, or a lease past its end) may be marked
-- interrupted, so a second process on the same database (`council history` beside the bot, or
-- another replica) never fails councils that a live process is still running.
-- Times are Unix seconds (DOUBLE PRECISION), written by the owner itself.
CREATE TABLE council_owners (
    owner_id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    renewed_at DOUBLE PRECISION NOT NULL,
    lease_until DOUBLE PRECISION NOT NULL
);
ALTER TABLE councils ADD COLUMN owner_id TEXT;
CREATE INDEX councils_owner ON councils (owner_id, status);
