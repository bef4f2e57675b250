-- v25: measured doubt. Each eval sample's consensus, so that a run reports the council's accuracy
-- by consensus band and the threshold under which it was unsure (core/eval/doubt.py): the rubric
-- consensus (0-100) and Kendall's W (0-1) of a council's ballots; NULL for one model alone, for a
-- council whose reviews gave none, and for samples stored before. And per channel, who is
-- mentioned in the thread when an answer there is unsure (`kind:id`: group, user or role; NULL:
-- nobody). Plain SQL both dialects accept.
ALTER TABLE eval_samples ADD COLUMN consensus DOUBLE PRECISION;
ALTER TABLE eval_samples ADD COLUMN agreement_w DOUBLE PRECISION;
ALTER TABLE channel_settings ADD COLUMN unsure_mention TEXT;
