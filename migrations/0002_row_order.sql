-- v2: keep the order of answers and reviews within a council, so that stored ballots come back
-- in a deterministic order (the leaderboard's seeded bootstrap depends on it), and index reviews
-- by reviewer. Existing rows are numbered in insertion order (rowid), which keeps their order.
ALTER TABLE answers ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
UPDATE answers SET position = rowid;
UPDATE reviews SET position = rowid;
DROP INDEX answers_council;
CREATE INDEX answers_council ON answers (council_id, position);
DROP INDEX reviews_council;
CREATE INDEX reviews_council ON reviews (council_id, position);
CREATE INDEX reviews_reviewer ON reviews (reviewer);
