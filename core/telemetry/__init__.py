"""What an operator sees of the process: Prometheus metrics, OpenTelemetry traces, log lines
(/health and /ready are core/durable/health.py: they check the council queue).

    metrics.py   the metrics (prometheus-client; multiprocess mode with PROMETHEUS_MULTIPROC_DIR)
    tracing.py   traces (the optional `otel` extra, OTEL_* variables; imported lazily) and the
                 stage spans the engine opens (StageTrace)
    calls.py     ModelCall: one model call, measured at the provider router (late reviews too)
    councils.py  CouncilTelemetry: one council's counters, timings, start/end log lines and span
    context.py   the council id, platform, channel and stage of the current task (context variables)
    logs.py      text or JSON log lines (LOG_FORMAT), and configure_logging (redacted)
    process.py   configure_telemetry: what the process's metrics and traces take from its settings

The engine and the providers call these; nothing here imports bot/ or a chat library.
"""
