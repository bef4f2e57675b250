-- A job's request fields that releases before payload version 2 do not know (their models refuse
-- unknown fields), kept beside the request so that an older worker still reads and runs the job
-- during a rolling upgrade (core/storage/jobs.py: LATER_FIELDS).
ALTER TABLE council_jobs ADD COLUMN request_later TEXT;
