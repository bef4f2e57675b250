"""Durable councils: a council that survives the process running it.

A council accepted from a chat platform is stored as a job (its request and where its answer
goes, `core/storage/jobs.py`) before it runs. Each completed step (stage-1 answers, stage-2
reviews) is written as it completes (`journal.py`). The worker (`worker.py`) runs a job from
its last completed step and hands the run to the platform's deliverer, which claims the
delivery before posting, so the answer is posted once.

queue.py     where jobs run: in this process (SQLite; a restart adopts its interrupted councils
             through the ownership lease) or on procrastinate workers (PostgreSQL)
control.py   Stop / Synthesize now for a council running in another process (LISTEN/NOTIFY)
worker.py    running one job: take it over, resume it, deliver it
journal.py   each completed step written as it completes
runs.py      the councils running in this process (CouncilRuns, CouncilRun: events, control, results)
health.py    ProcessHealth: /health, /ready (database and queue), /metrics, the --metrics-port server
"""
