"""Oracle of the ``scenarios`` section: HELM's own scenario classes read the rows from the files they download.

Per case the harness writes the given files under a fresh ``output_path`` (where the class's
``ensure_file_downloaded`` looks first, so nothing is fetched), calls the class's ``get_instances`` and, as HELM's
runner does when any instance lacks an id, ``with_instance_ids``. It records each instance in HELM's order: its
id, split, input text, references with their tags, and contrast inputs and references where the class gives them.
The case goes into the golden without its files (they follow from the rows, and the test needs the rows only).

HELM's RAFT module reads ``ought/raft`` through ``datasets.load_dataset``; ``datasets`` (pyarrow and more) is not
installed here, so a stand-in hands the class the shipped rows, split by the real ``datasets`` on the inputs side.
"""

from __future__ import annotations

import importlib
import pickle
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _oracle import run

datasets = types.ModuleType("datasets")  # HELM's RAFT module imports it; the real one (pyarrow and more) is not here
sys.modules.setdefault("datasets", datasets)

from helm.benchmark.scenarios import imdb_scenario_pinned_file_order
from helm.benchmark.scenarios.scenario import with_instance_ids


class ClassLabel:
    def __init__(self, names: list[str]) -> None:
        self.names = names

    def int2str(self, value: int) -> str:
        return self.names[value]


class Dataset:
    """What HELM's RAFT class reads of a ``datasets.Dataset``: rows, the Label feature, and a train_test_split whose two
    parts the inputs side computed with the real ``datasets`` (the arguments HELM passes are checked against them)."""

    def __init__(self, rows: list[dict[str, Any]], raft: dict[str, Any]) -> None:
        self.rows, self.raft = rows, raft
        self.features = {"Label": ClassLabel(raft["names"])}

    def __iter__(self) -> Any:
        return iter(self.rows)

    def train_test_split(self, test_size: float, seed: int) -> dict[str, Dataset]:
        if (test_size, seed) != (self.raft["test_size"], self.raft["seed"]):
            raise SystemExit(f"HELM split RAFT with test_size={test_size}, seed={seed}; the inputs assumed otherwise")
        return {part: Dataset(self.raft[part], self.raft) for part in ("train", "test")}


RAFT_ROWS: dict[str, Any] = {}


def load_dataset(name: str, subset: str, split: str, **_: Any) -> Dataset:
    if (name, split) != ("ought/raft", "train"):
        raise SystemExit(f"unexpected load_dataset({name!r}, {subset!r}, split={split!r})")
    raft = RAFT_ROWS["current"]
    return Dataset(raft["train"] + raft["test"], raft)


datasets.Dataset = Dataset  # type: ignore[attr-defined]
datasets.load_dataset = load_dataset  # type: ignore[attr-defined]


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
    RAFT_ROWS["current"] = case.get("raft")
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
        cases.append({**{key: value for key, value in case.items() if key not in ("files", "raft")}, "instances": found})
    return {"cases": cases, "not_covered": inputs["not_covered"]}


if __name__ == "__main__":
    run(main)
