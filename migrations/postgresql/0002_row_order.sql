-- PostgreSQL variant of ../0002_row_order.sql. There is no rowid to number existing rows with, and
-- none to number: a PostgreSQL database was never at version 1 with rows written by older code
-- (PostgreSQL support arrived after this migration), so new rows carry their position.
ALTER TABLE answers ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
DROP INDEX answers_council;
CREATE INDEX answers_council ON answers (council_id, position);
DROP INDEX reviews_council;
CREATE INDEX reviews_council ON reviews (council_id, position);
CREATE INDEX reviews_reviewer ON reviews (reviewer);
