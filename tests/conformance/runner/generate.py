"""Regenerate the runner golden: HELM 0.5.16's whole ``helm-run`` on the tiny model and the cases' offline rows.

Not part of the test run: CI compares pytest's run with the committed ``golden/runner.json``. Run it when HELM's pin,
the model or a case changes, review the diff and commit it:

    .venv/bin/python tests/conformance/runner/generate.py

Steps: build the helm-runner environment (``build_env.py``; about two minutes from PyPI); build the committed tiny
model's folder in a scratch folder (``model.py``) and serve it on loopback (``server.py``, for the served cases); write each case's
rows into the files HELM's scenario class downloads (``cases.py``) and the served model's deployment into HELM's
``prod_env``; run ``oracle.py`` in that environment, which calls ``helm-run`` with every run entry; read HELM's
``scenario_state.json``, ``per_instance_stats.json`` and ``stats.json`` and keep, per instance and perturbation,
what a pytest run can be compared with. Times, paths and the stats that measure time are left out and everything is
sorted, so regenerating on the same pins gives a byte-identical file.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
GOLDEN = HERE.parent / "golden" / "runner.json"
SCHEMA = 2
"""2: each run's prompts are stored without the prefix they all share (``prompt_prefix``)."""
TIMED = ("inference_runtime", "batch_size", "inference_idealized_runtime", "inference_denoised_runtime", "training_")
"""Stats that measure this machine's time or cost (left out: they differ on every run)."""
PER_INSTANCE = (
    "exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "exact_match_indicator",
    "f1_score", "rouge_l", "bleu_1", "bleu_4",
    "max_prob", "predicted_index", "logprob", "num_prompt_tokens", "num_output_tokens", "num_bytes",
)  # fmt: skip
"""The per-instance stats a pytest record can be compared with (the others, bias and toxicity among them, are kept
in the run's aggregates only: the golden stays a few megabytes with the whole offline editions in it)."""


def write_word_lists(output: Path) -> Path:
    """The project's own word lists, whole, where HELM's perturbations look for their downloads; returns the misspelling
    table's path (HELM reads that one from its package folder: ``oracle.py`` puts it there).

    HELM's misspelling and dialect steps draw once per listed word they meet and its name swap draws among the listed
    names, so both sides must read the same lists in the same order; that the lists are the project's and not HELM's
    is the word-list difference in docs/reference/helm-differences.md (``--holistic-word-lists``), not this comparison's. Formats as HELM reads
    them (``augmentations/misspelling_perturbation.py``, ``dialect_perturbation.py``, ``person_name_perturbation.py``).
    """
    from pytest_holistic.perturbations._tables import rows

    def dump(path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    dialect = {word: alternatives for word, *alternatives in rows("sae_to_aae.tsv")}
    dump(output / "perturbations" / "dialect" / "SAE_to_AAVE_mapping.json", json.dumps(dialect, indent=1, ensure_ascii=False))
    names = [
        f"{name},{kind},race,{race}" + (f",gender,{sex}" if sex != "-" else "")
        for name, kind, race, sex in rows("person_names.tsv")
    ]
    dump(output / "perturbations" / "person_name" / "data" / "person_names.txt", "\n".join(names) + "\n")
    misspellings = {correct: wrong for correct, *wrong in rows("misspellings.tsv")}
    return dump(output.parent / "correct_to_misspelling.json", json.dumps(misspellings, indent=1, ensure_ascii=False))


def write_served_deployment(prod_env: Path, folder: Path, url: str) -> None:
    """The served model as a HELM user declares an OpenAI-compatible server (``prod_env/model_deployments.yaml`` and
    its two companions, read by ``--local-path``): HELM's ``OpenAILegacyCompletionsClient`` at ``url``, the folder's
    own tokenizer for HELM's prompt-length checks, the same window and model tags ``--enable-local-huggingface-models``
    gives the local model, so both models get the same run specs."""
    import datetime

    import yaml

    from tests.conformance.runner.model import HELM_SERVED_MODEL, WINDOW
    from tests.conformance.runner.server import NAME

    def dump(name: str, content: dict[str, Any]) -> None:
        (prod_env / name).write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")

    prod_env.mkdir(parents=True, exist_ok=True)
    dump("tokenizer_configs.yaml", {"tokenizer_configs": [{
        "name": HELM_SERVED_MODEL,
        "tokenizer_spec": {
            "class_name": "helm.tokenizers.huggingface_tokenizer.HuggingFaceTokenizer",
            "args": {"pretrained_model_name_or_path": str(folder)},
        },
        "end_of_text_token": "<|endoftext|>",
        "prefix_token": "<|endoftext|>",
    }]})  # fmt: skip
    dump("model_metadata.yaml", {"models": [{
        "name": HELM_SERVED_MODEL,
        "display_name": NAME,
        "description": "the runner golden's tiny GPT-2 behind an OpenAI-compatible server",
        "creator_organization_name": "pytest-holistic",
        "access": "open",
        "release_date": datetime.date(2026, 1, 1),
        "tags": ["TEXT_MODEL_TAG", "FULL_FUNCTIONALITY_TEXT_MODEL_TAG"],
    }]})  # fmt: skip
    dump("model_deployments.yaml", {"model_deployments": [{
        "name": HELM_SERVED_MODEL,
        "model_name": HELM_SERVED_MODEL,
        "tokenizer_name": HELM_SERVED_MODEL,
        "max_sequence_length": WINDOW,
        "client_spec": {
            "class_name": "helm.clients.openai_client.OpenAILegacyCompletionsClient",
            "args": {"base_url": url, "api_key": "EMPTY", "openai_model_name": NAME},
        },
    }]})  # fmt: skip


def _perturbation(state: Mapping[str, Any]) -> str | None:
    perturbation = state["instance"].get("perturbation")
    return None if perturbation is None else perturbation["name"]


def _stat(stat: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    name = stat["name"]
    if name["name"].startswith(TIMED) or stat["count"] == 0:
        return None
    perturbation = name.get("perturbation")
    key = f"{name['split']}/{name['name']}"
    key += "" if perturbation is None else f"@{perturbation['name']}:{perturbation.get('computed_on', '')}"
    key += "" if name.get("sub_split") is None else f"#{name['sub_split']}"
    return key, {"mean": stat["mean"], "count": stat["count"]}


def extract(run: Path) -> dict[str, Any]:
    """One HELM run folder as the golden keeps it."""
    state = json.loads((run / "scenario_state.json").read_text(encoding="utf-8"))
    instances: dict[str, dict[str, Any]] = {}
    for request_state in state["request_states"]:
        instance = request_state["instance"]
        key = instance["id"] + (f"@{_perturbation(request_state)}" if _perturbation(request_state) else "")
        entry = instances.setdefault(
            key,
            {
                "id": instance["id"],
                "perturbation": _perturbation(request_state),
                "split": instance["split"],
                "input": instance["input"]["text"],
                "references": [[r["output"]["text"], "correct" in r["tags"]] for r in instance["references"]],
                "requests": [],
            },
        )
        completion = request_state["result"]["completions"][0]
        entry["requests"].append(
            {
                "mode": request_state.get("request_mode"),
                "reference_index": request_state.get("reference_index"),
                "prompt": request_state["request"]["prompt"],
                "max_tokens": request_state["request"]["max_tokens"],
                "text": completion["text"],
                "logprob": completion["logprob"],
                "token_logprobs": [token["logprob"] for token in completion["tokens"]],
                "num_train_instances": request_state["num_train_instances"],
                "prompt_truncated": request_state["prompt_truncated"],
            }
        )
    for entry in instances.values():
        entry["requests"].sort(key=lambda r: (r["mode"] or "", -1 if r["reference_index"] is None else r["reference_index"]))
    for stats in json.loads((run / "per_instance_stats.json").read_text(encoding="utf-8")):
        perturbation = stats.get("perturbation")
        key = stats["instance_id"] + (f"@{perturbation['name']}" if perturbation else "")
        kept = (s for s in stats["stats"] if s["name"]["name"] in PER_INSTANCE)
        instances[key]["stats"] = dict(sorted(filter(None, (_stat(s) for s in kept))))
    # Every prompt of a run opens with the same instructions and in-context examples: kept once, as the run's prefix.
    prefix = os.path.commonprefix([r["prompt"] for entry in instances.values() for r in entry["requests"]])
    for entry in instances.values():
        for r in entry["requests"]:
            r["prompt"] = r["prompt"][len(prefix) :]
    aggregate = dict(sorted(filter(None, (_stat(s) for s in json.loads((run / "stats.json").read_text(encoding="utf-8"))))))
    spec = json.loads((run / "run_spec.json").read_text(encoding="utf-8"))
    return {
        "run_spec": spec["name"],
        "adapter_spec": spec["adapter_spec"],
        "prompt_prefix": prefix,
        "instances": dict(sorted(instances.items())),
        "stats": aggregate,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=None, help="the helm-runner environment (default: under the cache)")
    parser.add_argument("--output", type=Path, default=GOLDEN, help="where the golden goes (default: %(default)s)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from tests.conformance.envs import pin_numerics

    pin_numerics()  # before torch and numpy are imported, here and in HELM's run: byte-identical goldens on any machine
    from tests.conformance.runner import build_env
    from tests.conformance.runner.cases import CASES, SERVED_CASES, served
    from tests.conformance.runner.model import HELM_MODEL, HELM_SERVED_MODEL, build, fingerprint
    from tests.conformance.runner.server import serving

    python = build_env.ensure(args.venv or build_env.default_venv())
    versions = json.loads(
        subprocess.run(
            [str(python), "-c", "import json, importlib.metadata as m; print(json.dumps({n: m.version(n) for n in "
             "('crfm-helm', 'torch', 'transformers', 'tokenizers')}))"],
            check=True, capture_output=True, text=True,
        ).stdout
    )
    with tempfile.TemporaryDirectory() as scratch:
        folder = build(Path(scratch))
        output = Path(scratch) / "benchmark_output"
        for case in CASES:
            for relative, text in case.helm_files(case.kept()).items():
                path = output / "scenarios" / case.helm_scenario / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                data = text.encode("utf-8")
                # NaturalQuestions' dev files are gzipped JSON lines (mtime 0: the same bytes every time)
                path.write_bytes(gzip.compress(data, mtime=0) if relative.endswith(".gz") else data)
        # an entry without arguments ("quac") takes the model as its first one
        runs_of = [(case.name, case, HELM_MODEL) for case in CASES]
        runs_of += [(served(case.name), case, HELM_SERVED_MODEL) for case in CASES if case.name in SERVED_CASES]
        entries = [f"{case.entry}{',' if ':' in case.entry else ':'}model={model}" for _, case, model in runs_of]
        table = write_word_lists(output)
        with serving(folder) as url:
            write_served_deployment(output / "prod_env", folder, url)
            oracle = [str(python), str(HERE / "oracle.py"), str(folder), str(output), str(table), *entries]
            subprocess.run(oracle, check=True, cwd=scratch)
        # HELM names a run folder from its spec's name plus the expanders' arguments; the run spec says which case it is.
        runs = {
            json.loads((run / "run_spec.json").read_text(encoding="utf-8"))["name"]: run
            for run in (output / "runs" / "golden").iterdir()
            if (run / "run_spec.json").exists()
        }
        cases = {}
        for name, case, model in runs_of:
            (run,) = [run for run_name, run in runs.items() if _matches(case, model, run_name)]
            cases[name] = {"entry": case.entry, "rows": {str(k): v for k, v in case.rows.items()}, **extract(run)}
        golden = {
            "schema": SCHEMA,
            "produced_by": versions,
            "model": {"helm_name": HELM_MODEL, "served_helm_name": HELM_SERVED_MODEL, "weights": fingerprint(folder)},
            "regenerate": "python tests/conformance/runner/generate.py",
            "cases": cases,
        }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(golden, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(args.output)
    return 0


def _matches(case: Any, model: str, run_name: str) -> bool:
    """Whether HELM's run name is the case's entry on ``model``: every ``key=value`` of the entry appears in it."""
    head, _, arguments = case.entry.partition(":")
    parts = [part for part in arguments.split(",") if part] + [f"model={model.replace('/', '_')}"]
    if case.run_name is not None:  # the run spec names the run itself; only the model follows
        head, parts = case.run_name, parts[-1:]
    return run_name.startswith(head) and all(part in run_name for part in parts)


if __name__ == "__main__":
    raise SystemExit(main())
