-- v8 (issue 12): running totals of each reviewer's ballots for the bias audit (core/bias.py) and the
-- `auto` reviewer weights (core/weights.py), kept by core/storage/reviewer_totals.py in the same
-- transaction as the council they count, like the totals of 0004. Keyed by scope as there.
-- The order each reviewer was shown is already stored (reviews.shown_labels); these are its sums:
-- * ballots, first_hits, expected_sum: ballots, those ranking first the answer shown first, and the
--   sum of 1/n (n: answers shown), whose mean is the rate a position-blind reviewer would show;
-- * self_*: the same for ranking its own answer first, over ballots that showed it its own answer;
-- * len_*: answer length (characters) x against rank position y = (p - 1) / (m - 1) over each ballot
--   of m >= 2, as sums for Pearson's r (len_ballots: ballots they come from);
-- * tau_sum, tau_n: Kendall's tau of each ballot against its council's aggregate.
-- Only reviews that record their ballot format count (written from this version on), so a council
-- stored earlier adds and removes nothing: there is nothing to rebuild here.
-- Shared by both dialects: DOUBLE PRECISION is an 8-byte float on PostgreSQL and REAL on SQLite.
CREATE TABLE reviewer_totals (
    platform TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    ballots INTEGER NOT NULL DEFAULT 0,
    first_hits INTEGER NOT NULL DEFAULT 0,
    expected_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
    self_ballots INTEGER NOT NULL DEFAULT 0,
    self_hits INTEGER NOT NULL DEFAULT 0,
    self_expected_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
    len_ballots INTEGER NOT NULL DEFAULT 0,
    len_n INTEGER NOT NULL DEFAULT 0,
    len_sx DOUBLE PRECISION NOT NULL DEFAULT 0,
    len_sy DOUBLE PRECISION NOT NULL DEFAULT 0,
    len_sxx DOUBLE PRECISION NOT NULL DEFAULT 0,
    len_syy DOUBLE PRECISION NOT NULL DEFAULT 0,
    len_sxy DOUBLE PRECISION NOT NULL DEFAULT 0,
    tau_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
    tau_n INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (platform, workspace_id, channel_id, reviewer)
);
