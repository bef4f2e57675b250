-- v17 (issue 33): the models a channel's askers may choose per question (`members: a, b; chairman:
-- c`, the /council modal's select). JSON list of model ids; NULL: the channel's own members, their
-- fallbacks and its chairman. Plain SQL that SQLite and PostgreSQL both accept.
ALTER TABLE channel_settings ADD COLUMN allowed_models TEXT;
