"""bench_speed.py's few-shot workload: the core suite's BoolQ and IMDB (offline editions), where every prompt repeats
the same instructions and in-context examples, run as a user runs them and against what the same prompts cost elsewhere.

Side by side, each a whole process:
  * ``pytest suites/core/test_boolq.py suites/core/test_imdb.py`` cold with prefix sharing on, then off (``--modes``):
    wall seconds and the model time its report records (workers' ``model_seconds``);
  * the bare loop without sharing (bare_loop.py ``requests``) on exactly the prompts the off run computed, taken
    from its report's records, with their max_tokens and stop sequences;
  * lm-evaluation-harness (``--lm-eval-python``): a generate_until task per (max_tokens, stop) over the same prompts;
  * the unique-token limit (bare_loop.py ``limit``): the prompts' tokens put through a prefix tree, plus the generated
    tokens, priced at this machine's dense forward rate measured in the same run.
Then the ratios (on/off and on/bare <= 0.5, on/limit <= 1.3, lm-eval/on) and the agreement: the same text on
every item between on, off, the bare loop and lm-eval, mismatches listed. Imports nothing heavy.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from holistic_runs import REPO, Side, load_report, model_arg, parse_modes, run_side, sharing_supported, timed

TARGETS = ["suites/core/test_boolq.py", "suites/core/test_imdb.py"]

LM_EVAL_TASK = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: prompt
doc_to_target: target
target_delimiter: ""
generation_kwargs:
  until: {until}
  max_gen_toks: {max_tokens}
  do_sample: false
  temperature: 0.0
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


def requests_of(report: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The distinct generation requests a report's records were answered from, in first-seen order, and each item's.

    A request is (rendered prompt, max_tokens, stop): what the plugin deduplicates and sends to the model.
    ``tokens_out`` is how many tokens its answer kept (up to the stop sequence).
    """
    rows: list[dict[str, Any]] = []
    index: dict[tuple[str, int, tuple[str, ...]], int] = {}
    of_item: dict[str, int] = {}
    for run in report["runs"]:
        adapter = run["adapter"]
        if adapter.get("method") != "generation":
            continue
        for record in run["instances"]:
            completion = record.get("completion")
            if completion is None or record.get("prompt") is None:
                continue
            key = (record["prompt"], int(adapter["max_tokens"]), tuple(adapter["stop"]))
            if key not in index:
                index[key] = len(rows)
                rows.append({"id": f"p{len(rows):05d}", "prompt": key[0], "max_tokens": key[1], "stop": list(key[2]),
                             "tokens_out": int(completion["tokens_out"]), "target": ""})  # fmt: skip
            of_item[record["nodeid"]] = index[key]
    return rows, of_item


def texts_of(report: dict[str, Any]) -> dict[str, str]:
    return {
        record["nodeid"]: record["completion"]["text"]
        for run in report["runs"]
        for record in run["instances"]
        if record.get("completion") is not None
    }


def lm_eval(lm_python: str, folder: str, rows: list[dict[str, Any]], batch: int, work: Path) -> dict[str, Any]:
    """lm-eval's generate_until over ``rows``: a task per (max_tokens, stop), one process; its texts by row id."""
    tasks, out = work / "lm_eval_tasks", work / "lm_eval_out"
    shutil.rmtree(tasks, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    tasks.mkdir(parents=True)
    groups: dict[tuple[int, tuple[str, ...]], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["max_tokens"], tuple(row["stop"])), []).append(row)
    names = []
    for number, ((max_tokens, stop), members) in enumerate(groups.items()):
        name = f"holistic_fewshot_{number}"
        data = tasks / f"{name}.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in members), encoding="utf-8")
        until = json.dumps(list(stop))
        (tasks / f"{name}.yaml").write_text(LM_EVAL_TASK.format(name=name, data=data, until=until, max_tokens=max_tokens))
        names.append(name)
    seconds, _ = timed(
        [lm_python, "-m", "lm_eval", "run", "--model", "hf",
         "--model_args", f"pretrained={folder},dtype=float32,add_bos_token=False",
         "--tasks", ",".join(names), "--include_path", str(tasks), "--batch_size", str(batch), "--device", "cpu",
         "--output_path", str(out), "--log_samples"],
        work,
    )  # fmt: skip
    texts: dict[str, str] = {}
    contexts_differ = 0
    for samples in out.rglob("samples_*.jsonl"):
        for line in samples.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            doc = sample["doc"]
            texts[doc["id"]] = sample["resps"][0][0]
            contexts_differ += sample["arguments"]["gen_args_0"]["arg_0"] != doc["prompt"]
    return {"seconds": seconds, "batch_size": batch, "texts": texts, "contexts_differ": contexts_differ}


def mismatches(items: dict[str, tuple[str | None, ...]], first: int, second: int) -> list[list[Any]]:
    """Items whose texts from sides ``first`` and ``second`` differ (or are missing on one)."""
    return [[nodeid, texts[first], texts[second]] for nodeid, texts in sorted(items.items()) if texts[first] != texts[second]]


def run(args: Any, folder: str, work: Path) -> dict[str, Any]:
    """The few-shot workload's figures (also what results.json keeps under ``fewshot``)."""
    work.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    first_mode, second_mode = parse_modes(args.fewshot_modes)
    supported = sharing_supported(python)
    extra = ["--holistic-max-instances", str(args.fewshot_instances)] if args.fewshot_instances else []
    print(f"few-shot workload: pytest {' '.join(TARGETS)} {' '.join(extra)}", flush=True)
    sides: list[Side] = [
        run_side(f"{index}-{mode}", mode, TARGETS, work, model=model_arg(args.model), supported=supported, extra=extra)
        for index, mode in enumerate((first_mode, second_mode), start=1)
    ]
    reports = [load_report(side) for side in sides]
    rows, of_item = requests_of(reports[1])
    details = (reports[1].get("model") or {}).get("details") or {}
    generation_batch = int(details.get("generation_batch_size") or 32)
    rate_batch = int(details.get("batch_size") or 8)
    prompts = work / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(
        f"  {len(rows)} distinct prompts from {len(of_item)} items; bare loop (no sharing), batch {generation_batch}", flush=True
    )
    bare_script = str(Path(__file__).resolve().parent / "bare_loop.py")
    bare_s, _ = timed(
        [python, bare_script, "requests", folder, str(prompts), str(generation_batch), str(work / "bare.json")], REPO
    )
    bare = json.loads((work / "bare.json").read_text(encoding="utf-8"))
    print(f"  unique-token limit: prefix tree and this machine's rate (batches of {rate_batch})", flush=True)
    timed([python, bare_script, "limit", folder, str(prompts), str(rate_batch), str(work / "limit.json"),
           "--rate-batches", str(args.rate_batches)], REPO)  # fmt: skip
    limit = json.loads((work / "limit.json").read_text(encoding="utf-8"))["result"]
    generated = sum(row["tokens_out"] for row in rows)
    limit_s = (limit["unique_tokens"] + generated) / limit["rate"]["tokens_per_s"]
    lm = None
    if args.lm_eval_python:
        print(f"  lm-evaluation-harness, batch {generation_batch}", flush=True)
        lm = lm_eval(args.lm_eval_python, folder, rows, generation_batch, work)

    texts_first, texts_second = texts_of(reports[0]), texts_of(reports[1])
    names = (sides[0].label, sides[1].label, "bare", "lm-eval")
    items: dict[str, tuple[str | None, ...]] = {}
    for nodeid in sorted(set(texts_first) | set(texts_second)):
        request = of_item.get(nodeid)
        bare_text = bare["result"][request].strip() if request is not None else None
        lm_text = lm["texts"].get(rows[request]["id"], "").strip() if lm is not None and request is not None else None
        items[nodeid] = (texts_first.get(nodeid), texts_second.get(nodeid), bare_text, lm_text)
    agreement = {
        f"{names[0]} vs {names[1]}": mismatches(items, 0, 1),
        f"{names[1]} vs bare": mismatches(items, 1, 2),
        **({f"{names[1]} vs lm-eval": mismatches(items, 1, 3)} if lm is not None else {}),
    }
    return {
        "targets": TARGETS,
        "pytest_args": extra,
        "sides": [side.to_data() for side in sides],
        "items": len(items),
        "requests": len(rows),
        "bare": {"seconds": bare_s, "compute_s": bare["compute_s"], "batch_size": generation_batch, "tokens": bare["tokens"]},
        "limit": {**limit, "generated_tokens": generated, "seconds": limit_s},
        "lm_eval": {key: value for key, value in lm.items() if key != "texts"} if lm is not None else None,
        "agreement": agreement,
    }


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.3f}x" if a is not None and b else "-"


def row(label: str, wall: float | None, model: float | None, note: str) -> str:
    """One line of the table: whole-process seconds, model seconds, then a note in parentheses."""
    wall_text = f"{wall:8.1f} s" if wall is not None else " " * 10
    model_text = f"model {model:8.1f} s" if model is not None else " " * 16
    return f"  {label:<24} {wall_text}   {model_text}   ({note})"


def report_lines(result: dict[str, Any]) -> list[str]:
    """The side-by-side table, the ratios and the agreement, as printed."""
    first, second = (Side(**{"shared_tokens": None, "fallback": None, **side}) for side in result["sides"])
    bare, limit, lm = result["bare"], result["limit"], result["lm_eval"]
    lines = [
        (
            f"\nfew-shot workload: BoolQ + IMDB offline editions, {result['items']} items, {result['requests']} distinct prompts "
            "(whole processes; model time excludes load)"
        ),
    ]
    for side in (first, second):
        note = f"report: {side.sharing_note()}; {side.passed_line}"
        lines.append(row(f"pytest, sharing {side.mode}", side.wall_s, side.model_s, note))
    lines.append(row("bare loop, no sharing", bare["seconds"], bare["compute_s"], f"batch {bare['batch_size']}"))
    if lm is not None:
        note = f"batch {lm['batch_size']}; {lm['contexts_differ']} contexts differ from the prompts"
        lines.append(row("lm-evaluation-harness", lm["seconds"], None, note))
    else:
        lines.append("  lm-evaluation-harness    not run (pass --lm-eval-python PATH to a separate environment with lm-eval[hf])")
    rate = limit["rate"]
    lines += [
        (
            row("unique-token limit", None, limit["seconds"], "")[:-2]
            + f"({limit['unique_tokens']} unique of {limit['total_tokens']} prompt tokens = "
            f"{limit['unique_tokens'] / max(1, limit['total_tokens']):.1%}, + {limit['generated_tokens']} generated, "
            f"at {rate['tokens_per_s']:.0f} tokens/s measured on {rate['batches']} dense batches of {rate['batch_size']})"
        ),
        "ratios (model time)",
        (
            f"  {first.mode}/{second.mode}: {ratio(first.model_s, second.model_s)} (target <= 0.5x)   "
            f"{first.mode}/bare loop: {ratio(first.model_s, bare['compute_s'])} (target <= 0.5x)   "
            f"{first.mode}/limit: {ratio(first.model_s, limit['seconds'])} (target <= 1.3x)"
        ),
        f"  to the limit: {second.mode} {ratio(second.model_s, limit['seconds'])}, bare loop {ratio(bare['compute_s'], limit['seconds'])}",
    ]
    if lm is not None:
        lines.append(f"  lm-eval/{first.mode} (whole processes): {ratio(lm['seconds'], first.wall_s)}   "
                     f"lm-eval/{second.mode}: {ratio(lm['seconds'], second.wall_s)}")  # fmt: skip
    lines.append("agreement (generated text, item by item)")
    for pair, differing in result["agreement"].items():
        lines.append(f"  {pair}: same on {result['items'] - len(differing)}/{result['items']}")
        lines += [f"    {nodeid}: {a!r} | {b!r}" for nodeid, a, b in differing[:10]]
        if len(differing) > 10:
            lines.append(f"    ... and {len(differing) - 10} more (all in results.json)")
    return lines
