-- PostgreSQL variant of ../0018_council_search.sql: one tsvector per council (English stemming,
-- as SQLite's porter tokenizer) under a GIN index, written by a trigger and removed with its
-- council. The function's body is a quoted string (not $$-quoted) so that the migration runner's
-- statement splitter, which knows SQL quotes, keeps it whole.
CREATE INDEX councils_recent ON councils (created_at, id);
CREATE TABLE council_search (
    council_id TEXT PRIMARY KEY REFERENCES councils (id) ON DELETE CASCADE,
    document TSVECTOR NOT NULL
);
CREATE INDEX council_search_document ON council_search USING GIN (document);
CREATE FUNCTION council_search_write() RETURNS trigger LANGUAGE plpgsql AS '
BEGIN
    INSERT INTO council_search (council_id, document) VALUES (
        NEW.id,
        to_tsvector(''english'', NEW.question || '' '' ||
            COALESCE(NEW.result::jsonb #>> ''{synthesis,text}'', '''') || '' '' ||
            COALESCE(jsonb_path_query_array(NEW.result::jsonb, ''$.answers[*].text'')::text, ''''))
    )
    ON CONFLICT (council_id) DO UPDATE SET document = EXCLUDED.document;
    RETURN NULL;
END';
CREATE TRIGGER council_search_written AFTER INSERT OR UPDATE OF question, result ON councils
    FOR EACH ROW EXECUTE FUNCTION council_search_write();
INSERT INTO council_search (council_id, document)
SELECT id, to_tsvector('english', question || ' ' || COALESCE(result::jsonb #>> '{synthesis,text}', '') || ' ' ||
                       COALESCE(jsonb_path_query_array(result::jsonb, '$.answers[*].text')::text, ''))
FROM councils;
