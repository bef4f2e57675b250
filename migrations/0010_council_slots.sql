-- v10: the global cap on running councils (MAX_CONCURRENT_COUNCILS) across every process on one
-- PostgreSQL database. A process takes a row here for each council it starts running and deletes
-- it when the council ends; rows count only while their owner's lease (council_owners, v3) is
-- live, so a process that dies (kill -9) frees its slots within one lease. Taking a slot counts
-- the rows under an advisory lock (core/storage/slots.py). SQLite has the table too (one schema
-- history) but one process needs no shared cap there.
-- Times are Unix seconds (DOUBLE PRECISION, REAL on SQLite).
CREATE TABLE council_slots (
    slot_id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    taken_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX council_slots_owner ON council_slots (owner_id);
