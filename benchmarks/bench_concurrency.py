"""Requests in flight against one OpenAI-compatible server: the same generations with 1 and with 8 at once.

The backend's thread pool keeps ``--holistic-concurrency`` requests open; a server that batches them (vLLM,
SGLang, TGI, llama.cpp's llama-server with ``--parallel``) answers the lot faster than one by one. Each
measurement uses its own prompts (no server-side prompt cache helps either side), the two concurrency levels
alternate over ``--rounds`` rounds, and the median time of each is compared.

usage: python benchmarks/bench_concurrency.py [--url http://HOST:PORT/v1#MODEL | --llama-server PATH]
                                              [--gguf FILE | --quantized] [--requests 32] [--max-tokens 24]
                                              [--rounds 3] [--concurrency 8] [--suite PATH --max-instances N]
Without --url it starts llama-server (from --llama-server, $LLAMA_SERVER, or the folder
benchmarks/build_llama_server.sh fills) with --parallel 8 on loopback, serving a 16-bit copy of the embedded
SmolLM2 (made once with llama-quantize): decoding it is memory-bound, as models on a GPU are, which is the regime
engines batch for. The 4-bit original (--quantized) is compute-bound on two CPU cores, where batching gains little.
With --suite it also times whole pytest runs of that suite file (no response cache) at both concurrency levels.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from pytest_holistic.models.base import GenerationRequest
from pytest_holistic.models.openai_options import OpenAIOptions
from pytest_holistic.models.embedded import gguf_path
from pytest_holistic.models.openai_backend import OpenAIBackend
from pytest_holistic.paths import cache_root

SUBJECTS = ("rivers", "bridges", "volcanoes", "glaciers", "harbours", "forests", "deserts", "islands")


def prompts(round_: int, level: int, count: int) -> list[str]:
    """Distinct prompts for each (round, level), alike in length, so neither side is served from a prompt cache."""
    return [
        f"Write three short facts about {SUBJECTS[i % len(SUBJECTS)]} number {round_ * 1000 + level * 100 + i}.\nFacts:"
        for i in range(count)
    ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_llama_server(binary: Path, slots: int, gguf: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "LD_LIBRARY_PATH": f"{binary.parent}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
    command = [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "--parallel", str(slots),
               "-c", str(1024 * slots), "--alias", "smollm2", "--no-webui"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2).read()
            return process, f"{url}#smollm2"
        except OSError:
            if process.poll() is not None:
                sys.exit(f"llama-server exited at start (exit {process.returncode}): {' '.join(command)}")
            time.sleep(0.5)
    process.kill()
    sys.exit("llama-server did not answer within 120 s")


def sixteen_bit_copy(binary: Path) -> Path:
    """The embedded GGUF re-encoded as F16 next to the cache (llama-quantize, once; about a second)."""
    target = cache_root() / "models" / "smollm2-135m-instruct-f16.gguf"
    if target.is_file():
        return target
    quantize = binary.parent / "llama-quantize"
    if not quantize.is_file():
        sys.exit(f"no llama-quantize beside {binary}: rebuild with benchmarks/build_llama_server.sh, or pass --quantized")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    env = {**os.environ, "LD_LIBRARY_PATH": str(binary.parent)}
    subprocess.run([str(quantize), "--allow-requantize", str(gguf_path()), str(partial), "F16"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    partial.rename(target)
    return target


def timed_suite(spec: str, concurrency: int, suite: str, max_instances: int) -> float:
    """Seconds of one pytest run of ``suite`` against the server, without the response cache."""
    with tempfile.TemporaryDirectory() as reports:
        command = [sys.executable, "-m", "pytest", suite, "-q", "-p", "no:cacheprovider", "--holistic-no-cache",
                   "--model", f"openai:{spec}", "--holistic-concurrency", str(concurrency),
                   "--holistic-max-instances", str(max_instances), "--holistic-report-dir", reports]  # fmt: skip
        started = time.perf_counter()
        result = subprocess.run(command, check=False, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
    if result.returncode not in (0, 1):
        sys.exit(f"pytest exited {result.returncode}:\n{result.stdout[-2000:]}")
    return elapsed


def timed(spec: str, concurrency: int, texts: list[str], max_tokens: int) -> float:
    model = OpenAIBackend(spec, OpenAIOptions(concurrency=concurrency, retries=2)).load()
    requests = [GenerationRequest(text, max_tokens=max_tokens, stop=()) for text in texts]
    started = time.perf_counter()
    results = model.generate(requests)
    elapsed = time.perf_counter() - started
    assert all(result.tokens_out > 0 for result in results), "a request came back empty"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="openai:-style URL#model of a running server (default: start llama-server)")
    parser.add_argument("--llama-server", type=Path, default=None)
    parser.add_argument("--gguf", type=Path, default=None, help="weights for llama-server (default: the embedded GGUF)")
    parser.add_argument("--quantized", action="store_true", help="serve the embedded 4-bit GGUF as it is")
    parser.add_argument("--suite", default=None, help="also time pytest runs of this suite file (e.g. suites/core/test_boolq.py)")
    parser.add_argument("--max-instances", type=int, default=20)
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    process = None
    spec = args.url
    if spec is None:
        binary = args.llama_server or Path(
            os.environ.get("LLAMA_SERVER") or cache_root() / "llama-server-0.3.36" / "bin" / "llama-server"
        )
        if not binary.is_file():
            sys.exit(f"no llama-server at {binary}: build it with `bash benchmarks/build_llama_server.sh`, or pass --url")
        weights = args.gguf or (gguf_path() if args.quantized else sixteen_bit_copy(binary))
        print(f"starting llama-server --parallel {args.concurrency} on {weights.name}")
        process, spec = start_llama_server(binary, args.concurrency, weights)
    try:
        timed(spec, args.concurrency, prompts(99, 9, args.concurrency), args.max_tokens)  # warm-up
        times: dict[int, list[float]] = {1: [], args.concurrency: []}
        for round_ in range(args.rounds):
            for level in times:
                times[level].append(timed(spec, level, prompts(round_, level, args.requests), args.max_tokens))
        one, many = statistics.median(times[1]), statistics.median(times[args.concurrency])
        print(f"server: {spec}; {args.requests} generations of {args.max_tokens} tokens, median of {args.rounds} rounds")
        for level, seconds in times.items():
            print(f"  {level} in flight: {statistics.median(seconds):7.2f} s  ({', '.join(f'{s:.2f}' for s in seconds)})")
        print(f"speed-up with {args.concurrency} in flight: {one / many:.2f}x (target >= 1.8x)")
        if args.suite:
            runs: dict[int, list[float]] = {1: [], args.concurrency: []}
            for round_ in range(args.rounds):
                for level in runs:
                    runs[level].append(timed_suite(spec, level, args.suite, args.max_instances))
            for level, seconds in runs.items():
                print(f"  pytest {args.suite}, {level} in flight: {statistics.median(seconds):7.2f} s  "
                      f"({', '.join(f'{s:.2f}' for s in seconds)})")  # fmt: skip
            ratio = statistics.median(runs[1]) / statistics.median(runs[args.concurrency])
            print(f"pytest run speed-up with {args.concurrency} in flight: {ratio:.2f}x (target >= 1.8x)")
    finally:
        if process is not None:
            process.kill()
            process.wait(30)


if __name__ == "__main__":
    main()
