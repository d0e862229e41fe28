"""Oracle of the ``scenarios`` section: HELM's own scenario classes read the rows from the files they download.

Per case the harness writes the given files under a fresh ``output_path`` (where the class's
``ensure_file_downloaded`` looks first, so nothing is fetched), calls the class's ``get_instances`` and, as HELM's
runner does when any instance lacks an id, ``with_instance_ids``. It records each instance in HELM's order: its
id, split, input text, references with their tags, and contrast inputs and references where the class gives them.
The case goes into the golden without its files (they follow from the rows, and the test needs the rows only).
A case with ``helm_may_raise`` (an exception's class name) records ``raises`` (``"KeyError: 'answer'"``) instead of
instances where HELM's class raises that exception on its rows.

The Dyck and synthetic reasoning classes read no file: they generate their instances from their seed. A case's
``keep`` (HELM split -> n) keeps the first n instances of each split (the synthetic reasoning class takes no sizes);
with ``listed``, the golden lists the first ``listed`` kept instances of each split in full and keeps
``instances_count`` and ``instances_sha256`` (sha256 of the kept records as compact JSON with sorted keys) for all.

HELM's RAFT module reads ``ought/raft`` through ``datasets.load_dataset``; ``datasets`` (pyarrow and more) is not
installed here, so a stand-in hands the class the shipped rows, split by the real ``datasets`` on the inputs side.
HELM's MATH module reads ``hendrycks/competition_math`` the same way and sorts and shuffles the DatasetDict: a stand-in
checks the arguments it passes (``sort("problem")``, ``shuffle(seed=42)``, the pinned revision) and hands it the rows in
the order the real ``datasets`` gave them on the inputs side; HELM's class does the rest (subject and level, the
reference, the splits). HELM's WMT14 module reads ``wmt14`` the same way: a stand-in checks the dataset, config and
pinned revision, the train split's ``shuffle(seed=42)`` and ``[:20000]``, and hands it the sample the real ``datasets``
took on the inputs side; HELM's class deduplicates it and reads the validation and test splits. HELM's LegalBench
module reads ``nguha/legalbench`` per task and split: a stand-in checks the task and the pinned revision and hands it
the task's rows of the split; its prompt settings file (field order, label key) is among the case's files.

HELM's CivilComments reads its CSV with ``pandas.read_csv(path, index_col=0)``, keeps ``df.loc[df[d] >= 0.5]`` and
walks ``iterrows()``; pandas is not installed here (installed, it would be imported, and break, under the fmeval
oracle's pyarrow stub), so a stand-in reads the CSV as pandas does for these columns: a column whose every filled
cell is a number holds floats, an empty cell is NaN, any other column holds the text.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import importlib
import json
import math
import pickle
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _oracle import run

datasets = types.ModuleType("datasets")  # HELM's RAFT, MATH, WMT14 and LegalBench modules import it; the real one is not here
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


class MathDatasets:
    """What HELM's MATH class reads of ``hendrycks/competition_math``'s DatasetDict: ``.sort(column)``, then
    ``.shuffle(seed=...)``, then each split's rows. The inputs side ordered the rows with the real ``datasets`` (sorted
    by ``problem``, shuffled with seed 42); the calls HELM makes are checked against those arguments."""

    def __init__(self, math: dict[str, Any], sorted_by: str | None = None) -> None:
        self.math, self.sorted_by = math, sorted_by

    def sort(self, column: str) -> MathDatasets:
        if column != self.math["sort"] or self.sorted_by is not None:
            raise SystemExit(f"HELM sorted MATH by {column!r}; the inputs assumed one sort by {self.math['sort']!r}")
        return MathDatasets(self.math, column)

    def shuffle(self, seed: int, **others: Any) -> dict[str, list[dict[str, Any]]]:
        if self.sorted_by is None or seed != self.math["seed"] or others:
            raise SystemExit(
                f"HELM shuffled MATH with seed={seed}, {others} (sorted: {self.sorted_by}); the inputs assumed otherwise"
            )
        return {split: [dict(row) for row in self.math[split]] for split in ("train", "test")}


class WmtTrain:
    """What HELM's WMT14 class reads of the train split: ``.shuffle(seed=...)``, then ``[:n]``, a dict of columns. The
    inputs side took that sample with the real ``datasets`` (its seed and size); HELM's arguments are checked against
    them, and HELM's class deduplicates the sample itself."""

    def __init__(self, wmt: dict[str, Any], seed: int | None = None) -> None:
        self.wmt, self.seed = wmt, seed

    def shuffle(self, seed: int, **others: Any) -> WmtTrain:
        if seed != self.wmt["seed"] or others or self.seed is not None:
            raise SystemExit(f"HELM shuffled WMT14's train split with seed={seed}, {others}; the inputs assumed otherwise")
        return WmtTrain(self.wmt, seed)

    def __getitem__(self, key: Any) -> dict[str, list[dict[str, str]]]:
        if self.seed is None or key != slice(None, self.wmt["max_train"], None):
            raise SystemExit(f"HELM read WMT14's train split [{key!r}] (shuffled: {self.seed}); the inputs assumed otherwise")
        return {"translation": [dict(pair) for pair in self.wmt["train"]]}


class Rows(Dataset):
    """A split HELM's LegalBench class iterates (and checks is a ``datasets.Dataset``)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows


RAFT_ROWS: dict[str, Any] = {}
MATH_ROWS: dict[str, Any] = {}
WMT_ROWS: dict[str, Any] = {}
LEGALBENCH_ROWS: dict[str, Any] = {}


def load_dataset(name: str, *args: Any, **kwargs: Any) -> Dataset | MathDatasets | dict[str, Any]:
    if name == "ought/raft" and kwargs.get("split") == "train":
        raft = RAFT_ROWS["current"]
        return Dataset(raft["train"] + raft["test"], raft)
    math = MATH_ROWS.get("current")
    if name == "hendrycks/competition_math" and not args and math and kwargs.get("revision") == math["revision"]:
        return MathDatasets(math)
    wmt = WMT_ROWS.get("current")
    if (
        wmt
        and (name, args) == (wmt["name"], (wmt["config"],))
        and kwargs == {"trust_remote_code": True, "revision": wmt["revision"]}
    ):
        return {"train": WmtTrain(wmt), **{split: [dict(row) for row in wmt[split]] for split in ("validation", "test")}}
    legal = LEGALBENCH_ROWS.get("current")
    if (
        legal
        and (name, args) == (legal["name"], (legal["task"],))
        and kwargs.get("split") in ("train", "test")
        and kwargs.get("revision") == legal["revision"]
    ):
        return Rows([dict(row) for row in legal[kwargs["split"]]])
    raise SystemExit(f"unexpected load_dataset({name!r}, *{args!r}, **{kwargs!r})")


class Frame:
    """The part of a pandas DataFrame HELM's CivilCommentsScenario uses."""

    def __init__(self, index: list[str], rows: list[dict[str, Any]]) -> None:
        self.index, self.rows = index, rows

    def __getitem__(self, key: str | list[bool]) -> Any:
        """``df[column]`` gives a column; ``df.loc[mask]`` (``loc`` is the frame itself) the rows the mask keeps."""
        if isinstance(key, list):
            return self.select(key)
        return Column([row[key] for row in self.rows])

    @property
    def loc(self) -> Frame:
        return self

    def select(self, mask: list[bool]) -> Frame:
        kept = [k for k, keep in enumerate(mask) if keep]
        return Frame([self.index[k] for k in kept], [self.rows[k] for k in kept])

    def iterrows(self) -> Any:
        return zip(self.index, self.rows)


class Column(list):  # type: ignore[type-arg]
    def __ge__(self, other: float) -> list[bool]:  # type: ignore[override]
        return [value >= other for value in self]


def read_csv(path: str, index_col: int) -> Frame:
    with open(path, encoding="utf-8", newline="") as handle:
        header, *lines = list(csv.reader(handle))
    columns = [name for k, name in enumerate(header) if k != index_col]
    cells = [[cell for k, cell in enumerate(line) if k != index_col] for line in lines]

    def number(cell: str) -> bool:
        try:
            float(cell)
        except ValueError:
            return False
        return True

    numeric = {c for k, c in enumerate(columns) if all(number(line[k]) for line in cells if line[k] != "")}
    rows = [
        {
            c: (float(cell) if cell != "" else math.nan) if c in numeric else (cell if cell != "" else math.nan)
            for c, cell in zip(columns, line)
        }
        for line in cells
    ]
    return Frame([line[index_col] for line in lines], rows)


pandas = types.ModuleType("pandas")
pandas.read_csv = read_csv  # type: ignore[attr-defined]
sys.modules.setdefault("pandas", pandas)

datasets.Dataset = Dataset  # type: ignore[attr-defined]
datasets.DatasetDict = dict  # type: ignore[attr-defined]  # HELM's MATH module imports it (for a typing.cast)
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
    MATH_ROWS["current"] = case.get("math")
    WMT_ROWS["current"] = case.get("wmt")
    LEGALBENCH_ROWS["current"] = case.get("legalbench")
    cls = getattr(importlib.import_module(spec["module"]), spec["name"])
    with tempfile.TemporaryDirectory() as output_path:
        for relative, content in case["files"].items():
            target = Path(output_path) / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str) and relative.endswith(".gz"):  # NaturalQuestions' dev files
                target.write_bytes(gzip.compress(content.encode("utf-8"), mtime=0))
            elif isinstance(content, str):
                target.write_text(content, encoding="utf-8")
            else:  # HELM's summarisation sources are pickled dicts
                target.write_bytes(pickle.dumps(content))
        instances = cls(**spec["arguments"]).get_instances(output_path)
    if any(instance.id is None for instance in instances):  # HELM's runner, helm/benchmark/runner.py
        instances = with_instance_ids(instances)
    return [record(instance) for instance in instances]


def first_per_split(found: list[dict[str, Any]], counts: dict[str, int]) -> list[dict[str, Any]]:
    """The first ``counts[split]`` records of each split, in HELM's order."""
    seen: dict[str, int] = {}
    kept = []
    for item in found:
        seen[item["split"]] = seen.get(item["split"], 0) + 1
        if seen[item["split"]] <= counts.get(item["split"], 0):
            kept.append(item)
    return kept


def generated(case: dict[str, Any], found: list[dict[str, Any]]) -> dict[str, Any]:
    """A generating class's records: the ``keep`` selection, listed in full or (``listed``) in part with a digest."""
    if "keep" in case:
        found = first_per_split(found, case["keep"])
    if "listed" not in case:
        return {"instances": found}
    digest = hashlib.sha256(json.dumps(found, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode())
    return {
        "instances": first_per_split(found, {item["split"]: case["listed"] for item in found}),
        "instances_count": len(found),
        "instances_sha256": digest.hexdigest(),
    }


def main(inputs: dict[str, Any], files: Path) -> dict[str, Any]:
    cases = []
    for case in inputs["cases"]:
        given = {key: value for key, value in case.items() if key not in ("files", "raft", "math", "wmt", "legalbench")}
        try:
            found = helm_instances(case)
        except Exception as error:  # a case that says HELM's class may fail so records the failure instead
            if type(error).__name__ != case.get("helm_may_raise"):
                raise
            cases.append({**given, "raises": f"{type(error).__name__}: {error}"})
            continue
        result = generated(case, found) if case["edition"] in ("seeded", "helm_run") else {"instances": found}
        cases.append({**given, **result})
    return {"cases": cases, "not_covered": inputs["not_covered"]}


if __name__ == "__main__":
    run(main)
