-- v5 (issue 13): what a council read besides the question. Files: name, type, size, content hash
-- and the extracted text (image bytes are never stored); web search sources in their cited order.
-- Both go with their council (ON DELETE CASCADE), so retention (`council prune`) removes them.
-- channel_settings.search: web search before stage 1 for the channel (NULL: COUNCIL_SEARCH_DEFAULT).
CREATE TABLE council_attachments (
    council_id TEXT NOT NULL REFERENCES councils (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    media_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    page_count INTEGER,
    text TEXT,
    PRIMARY KEY (council_id, position)
);
CREATE TABLE council_sources (
    council_id TEXT NOT NULL REFERENCES councils (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    title TEXT NOT NULL,
    url TEXT NOT NULL,
    snippet TEXT NOT NULL,
    published TEXT,
    PRIMARY KEY (council_id, position)
);
ALTER TABLE channel_settings ADD COLUMN search INTEGER;
