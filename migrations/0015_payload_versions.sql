-- Rolling upgrades (issue 37, docs/operating-faults.md): each durable council's job says the
-- version of the payload format it was written in (core/storage/jobs.py: PAYLOAD_VERSION), so
-- a worker that meets a job from a newer version leaves it for a newer worker instead of
-- misreading it. Additive (expand): older code that does not know the column keeps working,
-- its rows taking the default, version 1 (the format every earlier release wrote).
ALTER TABLE council_jobs ADD COLUMN payload_version INTEGER NOT NULL DEFAULT 1;
