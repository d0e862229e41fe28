"""GPU speed of pytest-holistic on a random-weight Llama of a stated shape, against bare loops and lm-eval.

The workload: N four-choice instances (contexts of about 96 tokens, choices of about 11) scored by
log-likelihood, and M prompts continued by 20 greedy tokens, on a Llama built here with random weights
(default on CUDA: SmolLM2-1.7B's shape, bfloat16). Every row is a whole process, timed on the wall:
  * bare loops (benchmarks/bare_loop.py): (a) shared context, its KV cache reordered per choice,
    (b) full rows with the LM head only on scored positions, (c) packed rows with a 4-D block mask;
    a float32 check that the three agree within 1e-4;
  * pytest with the plugin: cold and warm at a fixed batch size, cold at ``auto``, cold with ``-n 2`` and
    ``-n 4`` (workers share the one GPU), and each ``--holistic-scoring`` strategy when the plugin has it;
  * lm-eval (``--lm-eval-python``): loglikelihood at batch 64 and auto, and generate_until;
  * generation: a plain batched ``model.generate`` against pytest.
It prints the model time and load time the plugin reports, the ratios the speed targets are stated in,
the fraction of the device's peak FLOP rate reached (FLOPs = 2 x parameters x tokens; on CPU the
achieved TFLOP/s instead), and whether ``-n`` changed any answer.

usage: python benchmarks/bench_gpu.py [--device cuda|cpu] [--shape 1.7b|135m|tiny] [--instances 1000]
           [--prompts 256] [--batch-size 64] [--lm-eval-python PY] [--peak-tflops 989]
           [--parts inputs,bare,pytest,scoring,lm-eval,gen,table]
CPU defaults (--device cpu, the default when torch sees no GPU): --shape tiny --instances 200
--prompts 32 --batch-size 16, float32, -n 2 only; about 8 minutes on 2 busy cores, 3 more for lm-eval's rows
(CPU timings on a shared machine swing by 2x from run to run: read them as a check that every path works).
Everything is written under benchmarks/.work/gpu (git-ignored); results accumulate per device and shape
in results-<device>-<shape>.json, so parts can run in separate calls and ``--parts table`` reprints.

On the GPU machine (the device tool's nvidia-h100-x1). Its python3 has torch, transformers, tokenizers,
accelerate, pytest, pytest-xdist, numpy, pyyaml and hypothesis, which is all these runs import; it lacks
this project (installed from the carried tree, without dependencies) and cannot download anything.
  1. Here, in the repository root, write the inputs it cannot make there: SmolLM2's tokenizer.json,
     copied from the embedded model's folder, and the instances, scanned from this Python's stdlib:
         .venv/bin/python benchmarks/bench_gpu.py --parts inputs --instances 1000 --prompts 256
     A dependency that machine lacks would travel as wheels (this benchmark needs none):
         echo /.whl/ >> .git/info/exclude
         python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
             --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
             -d .whl NAME==VERSION
     and each call below would then begin with
         python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl &&
  2. There, each call with carry ["benchmarks/.work/gpu/inputs"] (plus ".whl" if made), one call per
     line below (each well inside the 10-minute limit; the first also builds the model, about a minute):
         python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . &&
           export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 &&
           python3 benchmarks/bench_gpu.py --device cuda --parts bare,pytest; cp benchmarks/.work/gpu/results-*.json $OUT/
         (the same first two lines) python3 benchmarks/bench_gpu.py --device cuda --parts scoring,gen; cp (the same) $OUT/
     benchmarks/.work survives between calls only while the machine stays warm. To print one table from
     calls on different machines, copy the returned results-cuda-1.7b.json into benchmarks/.work/gpu/
     here and add "benchmarks/.work/gpu/results-cuda-1.7b.json" to the next call's carry.
     lm-eval is not on that machine: its rows need an environment with lm-eval[hf] there
     (``--lm-eval-python``), which this script does not arrange.
  3. The bfloat16 agreement of the same model (answers across prefix sharing, batch sizes and strategies), in the
     same warm session after step 2 built the model:
         (the same first two lines) python3 benchmarks/bench_bf16_agreement.py \
           benchmarks/.work/gpu/models/llama-1.7b-random --device cuda --instances 1000; cp benchmarks/.work/bf16/results.json $OUT/
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "gpu"
INPUTS = WORK / "inputs"
TOKENIZER = INPUTS / "tokenizer"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
SMOLLM2_SPECIAL = {
    "bos_token": "<|im_start|>",
    "eos_token": "<|im_end|>",
    "pad_token": "<|im_end|>",
    "unk_token": "<|endoftext|>",
}
STRATEGIES = ("auto", "shared", "full", "packed")
PARTS = ("inputs", "bare", "pytest", "scoring", "lm-eval", "gen", "table")
DEFAULTS = {
    "cuda": {"shape": "1.7b", "instances": 1000, "prompts": 256, "batch_size": 64, "dtype": "bfloat16", "workers": "2,4"},
    "cpu": {"shape": "tiny", "instances": 200, "prompts": 32, "batch_size": 16, "dtype": "float32", "workers": "2"},
}
CHECK_INSTANCES = 64
"""Instances the float32 agreement check of the three bare loops scores."""

sys.path.insert(0, str(HERE))
from bench_speed import LM_EVAL_TASK, SUITE, paragraphs  # noqa: E402  (stdlib only: cheap to import)
from random_llama import SHAPES, SPECIAL_FILE  # noqa: E402

LM_EVAL_GEN = """task: holistic_gpu_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{query}}}}"
doc_to_target: "{{{{query}}}}"
generation_kwargs:
  until: ["<|no-stop-string|>"]
  max_gen_toks: 20
  do_sample: false
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


# -- arguments ---------------------------------------------------------------------------------------


def cuda_visible() -> bool:
    """Whether torch sees a GPU, asked in a child process so this one never initialises CUDA."""
    probe = "import torch; print(torch.cuda.is_available())"
    done = subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True, text=True)
    return done.stdout.strip() == "True"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda when torch sees a GPU")
    parser.add_argument("--shape", choices=sorted(SHAPES), default=None)
    parser.add_argument("--instances", type=int, default=None)
    parser.add_argument("--prompts", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=None, help="the fixed batch size (contexts or prompts per pass)")
    parser.add_argument("--dtype", default=None, help="bfloat16 on cuda, float32 on cpu")
    parser.add_argument("--workers", default=None, help="comma-separated -n values (cuda: 2,4; cpu: 2)")
    parser.add_argument(
        "--shard-size", type=int, default=None, help="--holistic-shard-size (default: the plugin's 64 items, which caps a batch)"
    )
    parser.add_argument("--lm-eval-python", default=None, help="python of an environment with lm-eval[hf] installed")
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="device peak, dense bf16 (H100 SXM: 989)")
    parser.add_argument("--tokenizer", type=Path, default=None, help="a folder with SmolLM2's tokenizer.json (default: found)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {', '.join(PARTS)}")
    args = parser.parse_args()
    if args.device is None:
        args.device = "cuda" if cuda_visible() else "cpu"
    for key, value in DEFAULTS[args.device].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.workers = [int(n) for n in str(args.workers).split(",") if n.strip()]
    args.parts = set(args.parts.split(","))
    unknown = args.parts - set(PARTS)
    if unknown:
        parser.error(f"unknown --parts {', '.join(sorted(unknown))}; use {', '.join(PARTS)}")
    if args.lm_eval_python:
        args.lm_eval_python = os.path.abspath(args.lm_eval_python)  # the runs use another working directory
    return args


# -- inputs: tokenizer, instances, model -------------------------------------------------------------


def embedded_tokenizer() -> Path | None:
    """The embedded SmolLM2-135M folder's tokenizer (vocabulary 49152, the shapes' vocabulary), if converted here."""
    explicit = os.environ.get("PYTEST_HOLISTIC_CACHE_DIR")
    root = (
        Path(explicit).expanduser()
        if explicit
        else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-holistic"
    )
    found = sorted((root / "models").glob("smollm2-135m*/tokenizer.json"))
    return found[-1].parent if found else None


def train_tokenizer(vocab_size: int) -> None:
    """A byte-level BPE trained on the instances' prose: the fallback where SmolLM2's tokenizer is absent."""
    from tokenizers import ByteLevelBPETokenizer

    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        (" ".join(words) for words in paragraphs()), vocab_size=vocab_size, special_tokens=special, show_progress=False
    )
    bpe.save(str(TOKENIZER / "tokenizer.json"))


def prepare_tokenizer(source: Path | None) -> str:
    """``inputs/tokenizer``: tokenizer.json and its special tokens, the only tokenizer files that travel."""
    if (TOKENIZER / "tokenizer.json").is_file():
        return "kept"
    TOKENIZER.mkdir(parents=True, exist_ok=True)
    (TOKENIZER / SPECIAL_FILE).write_text(json.dumps(SMOLLM2_SPECIAL))
    folder = source or embedded_tokenizer()
    if folder is not None and (folder / "tokenizer.json").is_file():
        shutil.copy(folder / "tokenizer.json", TOKENIZER / "tokenizer.json")
        return f"copied from {folder}"
    train_tokenizer(SHAPES["1.7b"]["vocab_size"])
    return "trained (byte-level BPE; SmolLM2's tokenizer was not found)"


def words_to_tokens(encode: Any, words: list[str], start: int, tokens: int, *, at_most: bool, prefix: str = "") -> int:
    """How many words from ``start`` make the longest text of at most ``tokens`` tokens, or the shortest of at least."""
    for n in range(1, len(words) - start + 1):
        length = len(encode(prefix + " ".join(words[start : start + n])))
        if at_most and length > tokens:
            return n - 1
        if not at_most and length >= tokens:
            return n
    return 0 if not at_most else len(words) - start


def make_instances(count: int, context_tokens: int = 96, choice_tokens: int = 11, seed: int = 0) -> Path:
    """Four-choice instances from stdlib docstring prose: ~96-token context, its next ~11 tokens as gold, 3 distractors.

    Lengths are counted with the benchmark's tokenizer (choices after a space, as the adapter sends them).
    Scanning the standard library takes a minute or two, so the file is kept with the inputs.
    """
    kept = INPUTS / f"mc-{count}-{context_tokens}-{choice_tokens}-{seed}.jsonl"
    if kept.is_file():
        return kept
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER / "tokenizer.json"))

    def encode(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False).ids

    rng = random.Random(seed)
    paras = paragraphs()
    rng.shuffle(paras)

    def span(words: list[str]) -> str:
        start = rng.randrange(0, max(1, len(words) // 2))
        return " ".join(
            words[start : start + max(1, words_to_tokens(encode, words, start, choice_tokens, at_most=False, prefix=" "))]
        )

    rows = []
    for words in paras:
        n = words_to_tokens(encode, words, 0, context_tokens, at_most=True)
        m = words_to_tokens(encode, words, n, choice_tokens, at_most=False, prefix=" ")
        if n == 0 or m == 0:
            continue  # the paragraph ends before the gold choice
        gold = " ".join(words[n : n + m])
        choices = [span(other) for other in rng.sample([p for p in paras if p is not words], 3)] + [gold]
        rng.shuffle(choices)
        rows.append({"id": f"mc{len(rows):04d}", "query": " ".join(words[:n]), "choices": choices, "gold": choices.index(gold)})
        if len(rows) == count:
            break
    if len(rows) < count:
        raise SystemExit(f"only {len(rows)} long docstring paragraphs found; ask for fewer --instances")
    kept.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return kept


def prepare_inputs(args: argparse.Namespace) -> tuple[Path, Path]:
    """The instances and prompts files (made once, then reused, also on a machine they were carried to)."""
    INPUTS.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    how = prepare_tokenizer(args.tokenizer)
    data = make_instances(args.instances)
    prompts = INPUTS / f"prompts-{args.prompts}.jsonl"
    if not prompts.is_file():
        rows = [json.loads(line) for line in data.read_text().splitlines()]
        if len(rows) < args.prompts:
            rows = [json.loads(line) for line in make_instances(args.prompts).read_text().splitlines()]
        prompts.write_text(
            "".join(json.dumps({"id": f"g{row['id']}", "query": row["query"]}) + "\n" for row in rows[: args.prompts])
        )
    print(f"inputs in {INPUTS} ({time.perf_counter() - started:.1f} s; tokenizer {how})")
    return data, prompts


def build_model(args: argparse.Namespace) -> Path:
    """The random-weight model folder for ``--shape``, built once per machine (in its own process)."""
    folder = WORK / "models" / f"llama-{args.shape}-random"
    if not (folder / "bench_model.json").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        started = time.perf_counter()
        run([sys.executable, str(HERE / "random_llama.py"), args.shape, str(TOKENIZER), str(folder), "--device", args.device])
        print(f"built {folder.name} in {time.perf_counter() - started:.1f} s")
    return folder


# -- running -----------------------------------------------------------------------------------------


def run(command: list[str], env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run a whole process in the work folder, offline; its wall time, or exit with its output tail."""
    started = time.perf_counter()
    completed = subprocess.run(
        command, check=False, capture_output=True, text=True, env={**os.environ, **OFFLINE, **(env or {})}, cwd=WORK
    )
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(
            f"command failed ({completed.returncode}): {' '.join(command)}\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}"
        )
    return elapsed, completed


def bare(args: argparse.Namespace, mode: str, folder: Path, data: Path, batch: int) -> dict[str, Any]:
    """One bare loop as a whole process: its wall time plus what it measured inside."""
    out = WORK / f"bare-{mode}.json"
    wall, _ = run(
        [
            sys.executable,
            str(HERE / "bare_loop.py"),
            mode,
            str(folder),
            str(data),
            str(batch),
            str(out),
            "--device",
            args.device,
            "--dtype",
            args.dtype,
        ]
    )
    return {"wall_s": wall, **json.loads(out.read_text())}


def pytest_base(args: argparse.Namespace, folder: Path, report_dir: Path, batch: str) -> list[str]:
    command = [sys.executable, "-m", "pytest", "test_bench.py", "-q", "-p", "no:cacheprovider", "--model", str(folder)]
    command += [
        "--holistic-batch-size",
        batch,
        "--holistic-report-dir",
        str(report_dir),
        "--holistic-cache-dir",
        str(WORK / "cache"),
    ]
    command += ["--holistic-device", args.device, "--holistic-dtype", args.dtype]
    if args.shard_size:
        command += ["--holistic-shard-size", str(args.shard_size)]
    return command


def read_report(report_dir: Path) -> dict[str, Any]:
    """The one report a run wrote into its own report folder."""
    found = sorted(report_dir.glob("*/*/report.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no report.json under {report_dir}")
    return json.loads(found[-1].read_text())


def plugin_run(
    args: argparse.Namespace, name: str, folder: Path, test: str, batch: str, extra: list[str], cold: bool
) -> dict[str, Any]:
    """One pytest process; model time is the workers' sum (and the slowest worker's), load time the slowest load."""
    report_dir = WORK / "reports" / name
    shutil.rmtree(report_dir, ignore_errors=True)
    if cold:
        shutil.rmtree(WORK / "cache", ignore_errors=True)
    wall, _ = run([*pytest_base(args, folder, report_dir, batch), "-k", test, *extra])
    report = read_report(report_dir)
    workers = report["workers"].values()
    run_data = next(r for r in report["runs"] if r["key"].endswith(test))
    answers = {}
    for record in run_data["instances"]:
        completion = record.get("completion") or {}
        answers[record["instance_id"]] = {k: completion.get(k) for k in ("predicted_index", "choice_logprobs", "text")}
    details = report.get("model", {}).get("details", {})
    return {
        "wall_s": wall,
        "model_s": sum(w["model_seconds"] for w in workers),
        "model_s_max": max(w["model_seconds"] for w in workers),
        "load_s": max(w["load_seconds"] for w in workers),
        "cache_hits": sum(w["cache_hits"] for w in workers),
        "computed": sum(w["loglikelihood_requests"] + w["generation_requests"] for w in workers),
        "batch_size": sorted({w["batch_size"] for w in workers if w.get("batch_size")}) or [details.get("batch_size")],
        "workers": len(report["workers"]),
        "answers": answers,
    }


def scoring_strategies(args: argparse.Namespace) -> list[str]:
    """The ``--holistic-scoring`` values this plugin offers (none before the option exists)."""
    _, done = run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"])
    lines = done.stdout.splitlines()
    start = next((k for k, line in enumerate(lines) if line.lstrip().startswith("--holistic-scoring")), None)
    if start is None:
        return []
    end = next((k for k in range(start + 1, len(lines)) if lines[k].lstrip().startswith("-")), len(lines))
    section = " ".join(lines[start:end])  # the option's own help, up to the next option
    return [s for s in STRATEGIES if s in section]


def lm_eval(args: argparse.Namespace, folder: Path, task: str, template: str, data: Path, batch: str) -> dict[str, Any]:
    tasks = WORK / "lm_eval_tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / f"{task}.yaml").write_text(template.format(data=data))
    device = "cuda:0" if args.device == "cuda" else "cpu"
    wall, _ = run(
        [args.lm_eval_python, "-m", "lm_eval", "run", "--model", "hf", "--model_args", f"pretrained={folder},dtype={args.dtype}",
         "--tasks", task, "--include_path", str(tasks), "--batch_size", batch, "--device", device, "--output_path", str(WORK / "lm_eval_out")]
    )  # fmt: skip
    return {"wall_s": wall, "batch_size": batch}


# -- comparisons -------------------------------------------------------------------------------------


def argmax(scores: list[float]) -> int:
    return max(range(len(scores)), key=lambda k: (scores[k], -k))


def compare_answers(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Items whose chosen answer differs, and the largest |log-probability difference| between two plugin runs."""
    differ, worst = 0, 0.0
    for key, got in a.items():
        other = b.get(key)
        if other is None or got["choice_logprobs"] is None or other["choice_logprobs"] is None:
            differ += 1
            continue
        differ += got["predicted_index"] != other["predicted_index"]
        worst = max([worst, *(abs(x - y) for x, y in zip(got["choice_logprobs"], other["choice_logprobs"]))])
    return {"differ": differ, "n": len(a), "max_abs_diff": worst}


def compare_to_bare(rows: list[dict], bare_scores: list[list[float]], answers: dict[str, Any]) -> dict[str, Any]:
    """Same comparison between a plugin run and a bare loop (instances in file order).

    Both sides' choices are taken as the argmax of the summed log-probabilities: the plugin's own pick follows HELM
    (``multiple_choice_separate_original`` divides each sum by its token count), which a bare loop does not do.
    """
    as_answers = {row["id"]: {"predicted_index": argmax(s), "choice_logprobs": s} for row, s in zip(rows, bare_scores)}
    by_sum = {
        key: {**got, "predicted_index": argmax(got["choice_logprobs"]) if got["choice_logprobs"] else None}
        for key, got in answers.items()
    }
    return compare_answers(by_sum, as_answers)


def max_bare_diff(a: list[list[float]], b: list[list[float]]) -> float:
    return max(abs(x - y) for sa, sb in zip(a, b) for x, y in zip(sa, sb))


# -- the parts ---------------------------------------------------------------------------------------


def part_bare(args: argparse.Namespace, results: dict[str, Any], folder: Path, data: Path) -> None:
    """The float32 agreement check, then the three bare loops at the fixed batch size."""
    rows = data.read_text().splitlines()
    subset = WORK / "check.jsonl"
    subset.write_text("".join(line + "\n" for line in rows[:CHECK_INSTANCES]))
    results["check"] = bare(args, "check", folder, subset, min(args.batch_size, 16))["result"]
    print(f"float32 check: {results['check']}")
    for mode in ("mc", "mc-full", "mc-packed"):
        results[f"bare:{mode}"] = bare(args, mode, folder, data, args.batch_size)
        print(f"bare {mode}: {results[f'bare:{mode}']['wall_s']:.1f} s")


def part_pytest(args: argparse.Namespace, results: dict[str, Any], folder: Path) -> None:
    """Cold and warm at the fixed batch size, cold at auto, cold with each -n."""
    fixed = str(args.batch_size)
    runs = [("cold", fixed, [], True), ("warm", fixed, [], False), ("cold-auto", "auto", [], True)]
    runs += [(f"cold-n{n}", fixed, ["-n", str(n)], True) for n in args.workers]
    for name, batch, extra, cold in runs:
        results[f"pytest:{name}"] = plugin_run(args, name, folder, "test_mc", batch, extra, cold)
        print(f"pytest {name}: {results[f'pytest:{name}']['wall_s']:.1f} s")


def part_scoring(args: argparse.Namespace, results: dict[str, Any], folder: Path) -> None:
    strategies = scoring_strategies(args)
    results["scoring_strategies"] = strategies
    if not strategies:
        print("this plugin has no --holistic-scoring option yet: scoring rows skipped")
    for strategy in strategies:
        key = f"pytest:scoring-{strategy}"
        results[key] = plugin_run(
            args, f"scoring-{strategy}", folder, "test_mc", str(args.batch_size), ["--holistic-scoring", strategy], True
        )
        print(f"pytest --holistic-scoring {strategy}: {results[key]['wall_s']:.1f} s")


def part_lm_eval(args: argparse.Namespace, results: dict[str, Any], folder: Path, data: Path, prompts: Path) -> None:
    for batch in ("64", "auto"):
        results[f"lm-eval:mc-{batch}"] = lm_eval(args, folder, "holistic_bench_mc", LM_EVAL_TASK, data, batch)
        print(f"lm-eval loglikelihood batch {batch}: {results[f'lm-eval:mc-{batch}']['wall_s']:.1f} s")
    results["lm-eval:gen"] = lm_eval(args, folder, "holistic_gpu_gen", LM_EVAL_GEN, prompts, str(args.batch_size))
    print(f"lm-eval generate_until: {results['lm-eval:gen']['wall_s']:.1f} s")


def part_gen(args: argparse.Namespace, results: dict[str, Any], folder: Path, prompts: Path) -> None:
    results["bare:gen"] = bare(args, "gen", folder, prompts, args.batch_size)
    results["pytest:gen"] = plugin_run(args, "gen", folder, "test_gen", str(args.batch_size), [], True)
    print(f"generation: bare {results['bare:gen']['wall_s']:.1f} s, pytest {results['pytest:gen']['wall_s']:.1f} s")


# -- the table ---------------------------------------------------------------------------------------


class Table:
    """Rows of wall / model / load seconds with the FLOP rate the model time implies."""

    def __init__(self, args: argparse.Namespace, parameters: int) -> None:
        self.args = args
        self.parameters = parameters
        unit = "% of peak" if args.device == "cuda" else "TFLOP/s"
        print(f"  {'':44} {'wall s':>8} {'model s':>8} {'load s':>7} {unit:>10}")

    def rate(self, tokens: int, seconds: float | None) -> str:
        if not seconds or not tokens:
            return ""
        achieved = 2 * self.parameters * tokens / seconds / 1e12
        return f"{100 * achieved / self.args.peak_tflops:9.1f}%" if self.args.device == "cuda" else f"{achieved:10.3f}"

    def row(
        self,
        label: str,
        wall: float | None,
        model: float | None = None,
        load: float | None = None,
        tokens: int = 0,
        note: str = "",
        rate_seconds: float | None = None,
    ) -> None:
        """``rate_seconds`` (default: ``model``) is the time the FLOP rate is taken over."""
        cells = [f"{v:8.1f}" if v is not None else f"{'-':>8}" for v in (wall, model)]
        cells.append(f"{load:7.1f}" if load is not None else f"{'-':>7}")
        rate = self.rate(tokens, rate_seconds or model)
        print(f"  {label:44} {' '.join(cells)} {rate:>10}  {note}".rstrip())


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def print_mc(args: argparse.Namespace, results: dict[str, Any], table: Table, rows: list[dict]) -> None:
    bares = {mode: results.get(f"bare:{mode}") for mode in ("mc", "mc-full", "mc-packed")}
    tokens = next((b["tokens"] for b in bares.values() if b), None)
    useful = tokens["context"] + tokens["continuation"] if tokens else 0
    labels = {
        "mc": "bare (a) shared context, KV reordered",
        "mc-full": "bare (b) full rows, LM head on scored only",
        "mc-packed": "bare (c) packed rows, 4-D block mask",
    }
    for mode, b in bares.items():
        if b:
            table.row(labels[mode], b["wall_s"], b["compute_s"], b["load_s"], useful, f"{b['dtype']}")
    for name in ["cold", "warm", "cold-auto", *(f"cold-n{n}" for n in args.workers)] + [
        f"scoring-{s}" for s in results.get("scoring_strategies", [])
    ]:
        p = results.get(f"pytest:{name}")
        if p:
            extra = f"batch {'/'.join(str(b) for b in p['batch_size'])}; hits {p['cache_hits']}, computed {p['computed']}"
            if p["workers"] > 1:  # the workers compute at the same time: the rate is over the slowest one's time
                extra += f"; slowest worker {p['model_s_max']:.1f} s (the rate's time)"
            work = useful if p["computed"] else 0
            table.row(f"pytest {name}", p["wall_s"], p["model_s"], p["load_s"], work, extra, p["model_s_max"])
    for batch in ("64", "auto"):
        lm = results.get(f"lm-eval:mc-{batch}")
        if lm:
            table.row(f"lm-eval loglikelihood, batch {batch}", lm["wall_s"])
    print_mc_ratios(args, results, rows, useful, bares)


def print_mc_ratios(
    args: argparse.Namespace, results: dict[str, Any], rows: list[dict], useful: int, bares: dict[str, Any]
) -> None:
    cold, warm = results.get("pytest:cold"), results.get("pytest:warm")
    lm_best = min((results[k]["wall_s"] for k in ("lm-eval:mc-64", "lm-eval:mc-auto") if k in results), default=None)
    done = {m: b for m, b in bares.items() if b}
    best = min(done, key=lambda m: done[m]["compute_s"]) if done else None
    print("  ratios:")
    if cold:
        if lm_best is None:
            print("    lm-eval: not run (pass --lm-eval-python PATH to a python with lm-eval[hf] installed)")
        else:
            print(f"    lm-eval best wall / pytest cold wall: {ratio(lm_best, cold['wall_s'])} (target >= 2x)")
        if best:
            print(f"    pytest cold model time / bare (a) compute: {ratio(cold['model_s'], done.get('mc', {}).get('compute_s'))}; "
                  f"/ best bare ({best}) compute: {ratio(cold['model_s'], done[best]['compute_s'])}")  # fmt: skip
    for strategy, mode in (("shared", "mc"), ("full", "mc-full"), ("packed", "mc-packed")):
        scored = results.get(f"pytest:scoring-{strategy}")
        if scored and mode in done:
            print(
                f"    pytest --holistic-scoring {strategy} model time / bare {mode} compute: {ratio(scored['model_s'], done[mode]['compute_s'])}"
            )
    if cold and warm:
        print(f"    pytest warm wall / cold wall: {ratio(warm['wall_s'], cold['wall_s'])} (target < 0.10x)")
    if useful:
        print(
            f"    useful work: {useful} tokens, {2 * results['parameters'] * useful / 1e12:.2f} TFLOP (2 x {results['parameters'] / 1e6:.1f} M parameters x tokens)"
        )
    print("  answers:")
    check = results.get("check")
    if check:
        diffs = ", ".join(f"{m} {d:.2e}" for m, d in check["max_abs_diff"].items())
        verdict = "agree within 1e-4" if max(check["max_abs_diff"].values()) <= 1e-4 else "DISAGREE beyond 1e-4"
        print(f"    bare loops in float32, {check['instances']} instances, max |diff| from (a): {diffs} -> {verdict}")
    if "mc" in done:
        for mode in ("mc-full", "mc-packed"):
            if mode in done:
                print(
                    f"    bare {mode} vs (a) over all instances in {done[mode]['dtype']}: max |diff| {max_bare_diff(done[mode]['result'], done['mc']['result']):.2e}"
                )
        if cold:
            c = compare_to_bare(rows, done["mc"]["result"], cold["answers"])
            print(
                f"    pytest cold vs bare (a): {c['differ']}/{c['n']} items answer differently, max |log-prob diff| {c['max_abs_diff']:.2e}"
            )
    widest = max((n for n in args.workers if f"pytest:cold-n{n}" in results), default=None)
    if cold and widest:
        c = compare_answers(results[f"pytest:cold-n{widest}"]["answers"], cold["answers"])
        print(
            f"    pytest -n {widest} vs -n 0: {c['differ']}/{c['n']} items answer differently, max |log-prob diff| {c['max_abs_diff']:.2e}"
        )


def print_gen(args: argparse.Namespace, results: dict[str, Any], table: Table) -> None:
    b, p, lm = results.get("bare:gen"), results.get("pytest:gen"), results.get("lm-eval:gen")
    tokens = b["tokens"]["prompt"] + b["tokens"]["generated"] if b else 0
    if b:
        table.row(
            f"bare model.generate, batch {args.batch_size}",
            b["wall_s"],
            b["compute_s"],
            b["load_s"],
            tokens,
            f"{b['tokens']['generated']} tokens generated",
        )
    if p:
        table.row(
            f"pytest cold, batch {'/'.join(str(x) for x in p['batch_size'])}", p["wall_s"], p["model_s"], p["load_s"], tokens
        )
    if lm:
        table.row(f"lm-eval generate_until, batch {lm['batch_size']}", lm["wall_s"])
    if b and p:
        same = sum(
            p["answers"].get(row_id, {}).get("text") == text.strip() for row_id, text in zip(results["prompt_ids"], b["result"])
        )
        print(f"  ratios: pytest model time / bare generate compute: {ratio(p['model_s'], b['compute_s'])} (target <= 1.15x); "
              f"wall {ratio(p['wall_s'], b['wall_s'])}")  # fmt: skip
        print(f"  answers: same text on {same}/{len(b['result'])} prompts")


def print_results(args: argparse.Namespace, results: dict[str, Any], rows: list[dict]) -> None:
    device = next(
        (results[k].get("device_name") or results[k]["device"] for k in ("bare:mc", "bare:gen") if k in results), args.device
    )
    print(f"\n{args.shape} random Llama ({results['parameters'] / 1e6:.1f} M parameters), {args.dtype}, on {device}; "
          f"{args.instances} instances, {args.prompts} prompts, fixed batch {args.batch_size}, "
          f"shard size {args.shard_size or 'the plugin default'}")  # fmt: skip
    if args.device == "cuda":
        print(f"FLOP-limit fraction: 2 x parameters x tokens / model time / {args.peak_tflops:g} TFLOP/s peak")
    print("\nmultiple choice (whole processes; model s: bare compute, or the plugin's summed worker model time)")
    table = Table(args, results["parameters"])
    print_mc(args, results, table, rows)
    print(f"\ngeneration (greedy, 20 tokens, {args.prompts} prompts)")
    print_gen(args, results, Table(args, results["parameters"]))


def main() -> None:
    args = parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "pytest.ini").write_text("[pytest]\n")  # keeps the repository's conftest and settings out of these runs
    data, prompts = prepare_inputs(args)
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    (WORK / "test_bench.py").write_text(SUITE.format(data=data, prompts=prompts))
    results_file = WORK / f"results-{args.device}-{args.shape}.json"
    results: dict[str, Any] = json.loads(results_file.read_text()) if results_file.is_file() else {}
    if args.parts - {"inputs", "table"}:
        folder = build_model(args)
        results["parameters"] = json.loads((folder / "bench_model.json").read_text())["parameters"]
        results["prompt_ids"] = [json.loads(line)["id"] for line in prompts.read_text().splitlines()]
        steps = [
            ("bare", lambda: part_bare(args, results, folder, data)),
            ("pytest", lambda: part_pytest(args, results, folder)),
            ("scoring", lambda: part_scoring(args, results, folder)),
            ("lm-eval", lambda: part_lm_eval(args, results, folder, data, prompts) if args.lm_eval_python else None),
            ("gen", lambda: part_gen(args, results, folder, prompts)),
        ]
        for name, step in steps:
            if name in args.parts:
                step()
                results_file.write_text(json.dumps(results))
    if "parameters" in results and args.parts != {"inputs"}:
        print_results(args, results, rows)


if __name__ == "__main__":
    main()
