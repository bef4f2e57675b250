-- v17: full-text search of councils' questions and answers (the browser app's `/?q=`), and an
-- index for its keyset pagination (newest first, ties broken by id).
-- SQLite: an FTS5 index without content of its own (the text stays in `councils`), kept by
-- triggers. FTS5 rows are numbered by integers; councils' rowids are not stable (VACUUM may
-- renumber a table without an INTEGER PRIMARY KEY), so `council_search_rows` numbers them, once:
-- a council keeps its number when it is stored again (running, then finished), so that numbers
-- follow the order councils were asked in and a search reads its newest matches first, straight
-- from the index (FTS5 walks rowids backwards), however many councils match.
-- PostgreSQL: postgresql/0018_council_search.sql (a tsvector per council, GIN index).
-- An index entry is removed with the same text it was added with ('delete' of a contentless
-- table), which the triggers recompute from the row being deleted.
CREATE INDEX councils_recent ON councils (created_at, id);
CREATE TABLE council_search_rows (
    row INTEGER PRIMARY KEY,
    council_id TEXT NOT NULL UNIQUE
);
CREATE VIRTUAL TABLE council_search USING fts5 (
    question, answers, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER council_search_added AFTER INSERT ON councils BEGIN
    INSERT OR IGNORE INTO council_search_rows (council_id) VALUES (new.id);
    INSERT INTO council_search (rowid, question, answers) VALUES (
        (SELECT row FROM council_search_rows WHERE council_id = new.id), new.question,
        COALESCE(json_extract(new.result, '$.synthesis.text'), '') || ' ' ||
        COALESCE((SELECT group_concat(json_extract(value, '$.text'), ' ') FROM json_each(new.result, '$.answers')), '')
    );
END;
CREATE TRIGGER council_search_removed AFTER DELETE ON councils BEGIN
    INSERT INTO council_search (council_search, rowid, question, answers) VALUES (
        'delete', (SELECT row FROM council_search_rows WHERE council_id = old.id), old.question,
        COALESCE(json_extract(old.result, '$.synthesis.text'), '') || ' ' ||
        COALESCE((SELECT group_concat(json_extract(value, '$.text'), ' ') FROM json_each(old.result, '$.answers')), '')
    );
END;
CREATE TRIGGER council_search_changed AFTER UPDATE OF question, result ON councils BEGIN
    INSERT INTO council_search (council_search, rowid, question, answers) VALUES (
        'delete', (SELECT row FROM council_search_rows WHERE council_id = old.id), old.question,
        COALESCE(json_extract(old.result, '$.synthesis.text'), '') || ' ' ||
        COALESCE((SELECT group_concat(json_extract(value, '$.text'), ' ') FROM json_each(old.result, '$.answers')), '')
    );
    INSERT INTO council_search (rowid, question, answers) VALUES (
        (SELECT row FROM council_search_rows WHERE council_id = new.id), new.question,
        COALESCE(json_extract(new.result, '$.synthesis.text'), '') || ' ' ||
        COALESCE((SELECT group_concat(json_extract(value, '$.text'), ' ') FROM json_each(new.result, '$.answers')), '')
    );
END;
INSERT INTO council_search_rows (council_id) SELECT id FROM councils ORDER BY created_at, id;
INSERT INTO council_search (rowid, question, answers)
SELECT r.row, c.question,
       COALESCE(json_extract(c.result, '$.synthesis.text'), '') || ' ' ||
       COALESCE((SELECT group_concat(json_extract(value, '$.text'), ' ') FROM json_each(c.result, '$.answers')), '')
FROM councils c JOIN council_search_rows r ON r.council_id = c.id;
