"""Oracle of the ``scenarios`` section: HELM's own scenario classes read the rows from the files they download.

Per case the harness writes the given files under a fresh ``output_path`` (where the class's
``ensure_file_downloaded`` looks first, so nothing is fetched), calls the class's ``get_instances`` and, as HELM's
runner does when any instance lacks an id, ``with_instance_ids``. It records each instance in HELM's order: its
id, split, input text, references with their tags, and contrast inputs and references where the class gives them.
The case goes into the golden without its files (they follow from the rows, and the test needs the rows only).
"""

from __future__ import annotations

import importlib
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _oracle import run

from helm.benchmark.scenarios import imdb_scenario_pinned_file_order
from helm.benchmark.scenarios.scenario import with_instance_ids


def fresh_process_state() -> None:
    """What a HELM process caches between scenario runs is cleared, as if each case ran in a new process.

    IMDB's pinned file order is read once per process into a module global; each case brings its own.
    """
    imdb_scenario_pinned_file_order._split_to_class_to_pinned_file_order = {}


def references(refs: Any) -> list[dict[str, Any]]:
    return [{"text": ref.output.text, "tags": list(ref.tags)} for ref in refs]


def record(instance: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": instance.id,
        "split": instance.split,
        "input": instance.input.text,
        "references": references(instance.references),
    }
    if instance.contrast_inputs:
        found["contrasts"] = [
            {"input": given.text, "references": references(refs)}
            for given, refs in zip(instance.contrast_inputs, instance.contrast_references)
        ]
    return found


def helm_instances(case: dict[str, Any]) -> list[dict[str, Any]]:
    spec = case["helm_class"]
    fresh_process_state()
    cls = getattr(importlib.import_module(spec["module"]), spec["name"])
    with tempfile.TemporaryDirectory() as output_path:
        for relative, content in case["files"].items():
            target = Path(output_path) / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                target.write_text(content, encoding="utf-8")
            else:  # HELM's summarisation sources are pickled dicts
                target.write_bytes(pickle.dumps(content))
        instances = cls(**spec["arguments"]).get_instances(output_path)
    if any(instance.id is None for instance in instances):  # HELM's runner, helm/benchmark/runner.py
        instances = with_instance_ids(instances)
    return [record(instance) for instance in instances]


def main(inputs: dict[str, Any], files: Path) -> dict[str, Any]:
    cases = []
    for case in inputs["cases"]:
        found = helm_instances(case)
        cases.append({**{key: value for key, value in case.items() if key != "files"}, "instances": found})
    return {"cases": cases, "not_covered": inputs["not_covered"]}


if __name__ == "__main__":
    run(main)
