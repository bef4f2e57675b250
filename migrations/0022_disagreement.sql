-- v22: where the members stand, beside the synthesis (core/models/disagreement.py): the council's
-- `disagreement` as JSON ({"agreed": [...], "contested": [...], "unique": [...], "open": [...],
-- "written": [...], "measured": [...]}), NULL for councils without a synthesis and for those
-- stored before. Also inside `result`; a column of its own so that history and SQL can read it
-- without the whole result. Plain SQL that SQLite and PostgreSQL both accept.
ALTER TABLE councils ADD COLUMN disagreement TEXT;
