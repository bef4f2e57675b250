"""llama.cpp's own OpenAI-compatible HTTP server (the engine xllamacpp ships) on one model file,
until it is terminated:

    python -m tests.llama_engine_server MODEL.gguf PORT THREADS ALIAS

It prints its address once it listens. It is what a team runs as `llama-server`, and what the
`local:` provider runs inside its runtime processes."""

from __future__ import annotations

import signal
import sys
import threading


def main(model: str, port: str, threads: str, alias: str) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.model_alias = {alias}
    params.hostnames = ["127.0.0.1"]
    params.port = int(port)
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = int(threads)
    params.cpuparams_batch.n_threads = int(threads)
    params.warmup = False
    server = xllamacpp.Server(params)
    print(server.listening_address, flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    stopped.wait()


if __name__ == "__main__":
    main(*sys.argv[1:5])
