-- v11: the messages we post for a council, so that a thread's history is read from this map
-- instead of from what our messages show (block ids, embed footers). One row per message:
-- the council it belongs to and what it is there: the question, progress (the status message,
-- a stream that did not end up holding the answer, a note), or (part of) the answer.
-- No reference to councils: storing a result replaces the council's row (and its cascading
-- children), and the map must outlive that; rows of pruned councils go with the councils'
-- jobs (Storage.prune). Plain SQL that SQLite and PostgreSQL both accept.
CREATE TABLE council_messages (
    platform TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    council_id TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('question', 'progress', 'answer')),
    PRIMARY KEY (platform, channel_id, message_id)
);
CREATE INDEX council_messages_council ON council_messages (council_id);
