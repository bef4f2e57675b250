-- v16 (issue 33): rubric scores. Each review's scores as JSON ({"A": {"accuracy": 8, ...}}, by
-- label like ballot_labels; NULL for reviews stored before), and the council's consensus, 0-100
-- from the scores' spread (rust/ranking/src/scores.rs; NULL without scores). Plain SQL that
-- SQLite and PostgreSQL both accept.
ALTER TABLE reviews ADD COLUMN scores TEXT;
ALTER TABLE councils ADD COLUMN consensus DOUBLE PRECISION;
