-- v21: a channel's seat lenses, set by its admins (`/council-admin lens`): a JSON object from a
-- seat (`primary|fallback`) to its lens ({"persona", "preset", "temperature", "max_tokens"}).
-- NULL: the lenses of COUNCIL_SEATS_FILE, if any. Plain TEXT on SQLite and PostgreSQL alike.
ALTER TABLE channel_settings ADD COLUMN lenses TEXT;
