-- v7 (issue 12): a channel's default council mode, `standard` or `quick` (NULL: COUNCIL_MODE).
-- Plain TEXT works alike on SQLite and PostgreSQL, so there is no dialect override.
ALTER TABLE channel_settings ADD COLUMN mode TEXT;
