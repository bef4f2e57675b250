-- v4: running totals for the leaderboard, kept in the same transaction as the rows they count
-- (core/storage/totals.py), so that a leaderboard over 100,000 councils reads a few hundred rows
-- instead of every review and answer. Keyed by scope: platform, workspace and channel ('' when
-- the council had none). Rebuilt here from the rows already stored.
-- Shared by both dialects: DOUBLE PRECISION is an 8-byte float on PostgreSQL and REAL on SQLite.

-- How often each distinct ballot (reviews.ballot_models, JSON text, non-empty) was cast.
CREATE TABLE ballot_counts (
    platform TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    ballot TEXT NOT NULL,
    ballots INTEGER NOT NULL,
    PRIMARY KEY (platform, workspace_id, channel_id, ballot)
);

-- Councils with at least one non-empty ballot.
CREATE TABLE ballot_councils (
    platform TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    councils INTEGER NOT NULL,
    PRIMARY KEY (platform, workspace_id, channel_id)
);

-- Per model: its answers (councils, rows, failures, latencies), its aggregate places and the cost
-- of all its calls (answers, reviews, syntheses); sums and counts, so means stay exact to add up.
CREATE TABLE model_totals (
    platform TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    model TEXT NOT NULL,
    councils INTEGER NOT NULL DEFAULT 0,
    answers INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    latency_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
    latency_n INTEGER NOT NULL DEFAULT 0,
    places INTEGER NOT NULL DEFAULT 0,
    first_places INTEGER NOT NULL DEFAULT 0,
    rank_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
    rank_n INTEGER NOT NULL DEFAULT 0,
    cost_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
    cost_n INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (platform, workspace_id, channel_id, model)
);

INSERT INTO ballot_counts (platform, workspace_id, channel_id, ballot, ballots)
SELECT c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), r.ballot_models, COUNT(*)
FROM reviews r JOIN councils c ON c.id = r.council_id
WHERE r.ballot_models != '[]'
GROUP BY c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), r.ballot_models;

INSERT INTO ballot_councils (platform, workspace_id, channel_id, councils)
SELECT c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), COUNT(DISTINCT r.council_id)
FROM reviews r JOIN councils c ON c.id = r.council_id
WHERE r.ballot_models != '[]'
GROUP BY c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, '');

-- One row per (scope, model) from every table that names models, then summed; a model named only
-- by calls without a cost has nothing to count.
INSERT INTO model_totals (platform, workspace_id, channel_id, model, councils, answers, failures, latency_sum,
                          latency_n, places, first_places, rank_sum, rank_n, cost_sum, cost_n)
SELECT platform, workspace_id, channel_id, model, SUM(councils), SUM(answers), SUM(failures), SUM(latency_sum),
       SUM(latency_n), SUM(places), SUM(first_places), SUM(rank_sum), SUM(rank_n), SUM(cost_sum), SUM(cost_n)
FROM (
    SELECT c.platform, COALESCE(c.workspace_id, '') AS workspace_id, COALESCE(c.channel_id, '') AS channel_id,
           a.model, COUNT(DISTINCT a.council_id) AS councils, COUNT(*) AS answers,
           SUM(CASE WHEN a.error_kind IS NOT NULL THEN 1 ELSE 0 END) AS failures,
           COALESCE(SUM(a.latency_s), 0) AS latency_sum, COUNT(a.latency_s) AS latency_n,
           0 AS places, 0 AS first_places, 0 AS rank_sum, 0 AS rank_n,
           COALESCE(SUM(a.cost_usd), 0) AS cost_sum, COUNT(a.cost_usd) AS cost_n
    FROM answers a JOIN councils c ON c.id = a.council_id
    GROUP BY c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), a.model
    UNION ALL
    SELECT c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), g.model, 0, 0, 0, 0, 0,
           COUNT(*), SUM(CASE WHEN g.position = 1 AND g.average_rank IS NOT NULL THEN 1 ELSE 0 END),
           COALESCE(SUM(g.average_rank), 0), COUNT(g.average_rank), 0, 0
    FROM aggregates g JOIN councils c ON c.id = g.council_id
    GROUP BY c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), g.model
    UNION ALL
    SELECT c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), r.reviewer, 0, 0, 0, 0, 0,
           0, 0, 0, 0, COALESCE(SUM(r.cost_usd), 0), COUNT(r.cost_usd)
    FROM reviews r JOIN councils c ON c.id = r.council_id
    GROUP BY c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), r.reviewer
    UNION ALL
    SELECT c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), s.model, 0, 0, 0, 0, 0,
           0, 0, 0, 0, COALESCE(SUM(s.cost_usd), 0), COUNT(s.cost_usd)
    FROM synthesis s JOIN councils c ON c.id = s.council_id
    GROUP BY c.platform, COALESCE(c.workspace_id, ''), COALESCE(c.channel_id, ''), s.model
) AS parts
GROUP BY platform, workspace_id, channel_id, model
HAVING SUM(answers) > 0 OR SUM(places) > 0 OR SUM(cost_n) > 0;
