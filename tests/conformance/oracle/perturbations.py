"""Oracle of the ``perturbations`` section: HELM's own perturbations (and fmeval's per-character rules) on the inputs.

Runs in the oracle environment only. For every preset it builds HELM's perturbation from the class and
arguments the inputs give (a ``@name`` argument is the path of that file in ``files``), checks those arguments
against HELM's ``run_expander`` presets, and runs each instance through HELM's ``Processor`` configured as
``run_expander`` configures it (original included, unchanged inputs skipped) with seeds None, 1 and 2. Each
seed's variant is also made by ``perturbation.apply`` so it can be attributed to its seed; the kept ones must be
exactly what the ``Processor`` returned.

HELM reads its misspelling table from the file next to ``misspelling_perturbation.py``. So that HELM's code
runs unmodified and the oracle environment stays untouched, the ``helm`` package is mirrored into a scratch
folder (symbolic links, and real copies of that module and the inputs' table), which goes first on the path.

fmeval draws from one numpy generator shared across records, which the project replaces by a stream per
instance; what is checked here is fmeval's rule per character: its transforms run with their generator
replaced by a scripted stream that returns the inputs' fixed draws (``Scripted``; the project's test drives
its functions with the same semantics).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _oracle import run

FILE_ARGUMENTS = ("mapping_file_path", "name_file_path")


def mirror_helm(table: Path, scratch: Path) -> Path:
    """A ``helm`` package under ``scratch`` whose misspelling module reads ``table``; everything else links to the original."""
    spec = importlib.util.find_spec("helm")
    assert spec is not None and spec.submodule_search_locations, "helm is not installed in the oracle environment"
    source = Path(next(iter(spec.submodule_search_locations)))
    target = scratch / "helm"
    shutil.copytree(source, target, copy_function=os.symlink, ignore=shutil.ignore_patterns("__pycache__"))
    augmentations = target / "benchmark" / "augmentations"
    module = augmentations / "misspelling_perturbation.py"
    module.unlink()
    shutil.copyfile(source / "benchmark" / "augmentations" / "misspelling_perturbation.py", module)
    (augmentations / "correct_to_misspelling.json").unlink()
    shutil.copyfile(table, augmentations / "correct_to_misspelling.json")
    return scratch


def _arguments(args: dict[str, Any], files: Path) -> dict[str, Any]:
    return {
        key: str(files / value[1:]) if isinstance(value, str) and value.startswith("@") else value for key, value in args.items()
    }


def _helm_presets(specs: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Per project preset, the ``run_expander`` presets whose spec is the same class with the same arguments.

    File arguments are left out of the comparison (``run_expander`` passes None: HELM downloads its files).
    """
    from helm.benchmark.run_expander import PERTURBATION_SPECS_DICT

    def key(class_name: str, args: dict[str, Any]) -> tuple[str, str]:
        kept = {name: value for name, value in args.items() if name not in FILE_ARGUMENTS}
        return class_name, repr(sorted(kept.items()))

    helm: dict[tuple[str, str], list[str]] = {}
    for preset, runs in PERTURBATION_SPECS_DICT.items():
        for perturbation_specs in runs.values():
            for perturbation_spec in perturbation_specs:
                helm.setdefault(key(perturbation_spec.class_name, dict(perturbation_spec.args)), []).append(preset)
    return {name: sorted(set(helm.get(key(spec["class"], spec["args"]), []))) for name, spec in specs.items()}


def _helm_instance(data: dict[str, Any]) -> Any:
    from helm.benchmark.scenarios.scenario import CORRECT_TAG, Input, Instance, Output, Reference

    def references(items: list[dict[str, Any]]) -> list[Any]:
        return [Reference(Output(text=item["text"]), tags=[CORRECT_TAG] if item["correct"] else []) for item in items]

    contrasts = data.get("contrasts")
    return Instance(
        input=Input(text=data["input"]),
        references=references(data["references"]),
        split="test",
        id=data["id"],
        contrast_inputs=[Input(text=c["input"]) for c in contrasts] if contrasts else None,
        contrast_references=[references(c["references"]) for c in contrasts] if contrasts else None,
    )


def _content(instance: Any) -> dict[str, Any]:
    return {
        "input": instance.input.text,
        "references": [{"text": ref.output.text, "correct": ref.is_correct} for ref in instance.references],
    }


def _error(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


def _run_one(perturbation: Any, data: dict[str, Any], seeds: list[int | None]) -> list[dict[str, Any]]:
    """One record per seed: HELM's variant, or dropped, or the error HELM raised."""
    from helm.benchmark.augmentations.data_augmenter import Processor

    instance = _helm_instance(data)
    made: dict[int | None, Any] = {}
    records = []
    for seed in seeds:
        record: dict[str, Any] = {"instance": data["id"], "seed": seed}
        try:
            made[seed] = perturbation.apply(instance, seed=seed)
        except Exception as error:  # noqa: BLE001 - HELM raising is a result to record
            record["error"] = _error(error)
        else:
            record["dropped"] = made[seed].input == instance.input
            if not record["dropped"]:
                record["output"] = _content(made[seed])
        records.append(record)
    processor = Processor(include_original=True, skip_unchanged=True, perturbations=[perturbation], seeds_per_instance=len(seeds))
    try:
        kept = processor.process(instance)
    except Exception:  # noqa: BLE001 - checked against the seeds' own records
        assert any("error" in record for record in records), f"{data['id']}: the Processor raised, no single seed did"
        return records
    expected = [instance] + [made[seed] for seed in seeds if made[seed].input != instance.input]
    assert [_content(i) for i in kept] == [_content(i) for i in expected], f"{data['id']}: seeds do not explain the Processor"
    return records


class Scripted:
    """A stand-in for fmeval's numpy generator that returns fixed draws, so only the per-character rule is compared.

    ``random()`` is the next draw ``u``; ``choice(seq)`` is ``seq[int(u * len(seq))]``; ``choice(seq, k, False)``
    takes ``k`` items one at a time the same way from what is left.
    """

    def __init__(self, draws: list[float]) -> None:
        self.draws = iter(draws)

    def random(self) -> float:
        return next(self.draws)

    def choice(self, seq: Any, size: int | None = None, replace: bool = True) -> Any:
        pool = list(seq)
        if size is None:
            return pool[int(self.random() * len(pool))]
        assert not replace
        return [pool.pop(int(self.random() * len(pool))) for _ in range(size)]


def _fmeval(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # fmeval.util imports ray for its distributed runner, which these transforms never touch.
    ray = types.ModuleType("ray")
    actor = types.ModuleType("ray.actor")
    actor.ActorHandle = object  # type: ignore[attr-defined]
    ray.actor = actor  # type: ignore[attr-defined]
    sys.modules.setdefault("ray", ray)
    sys.modules.setdefault("ray.actor", actor)
    semantic = importlib.import_module("fmeval.transforms.semantic_perturbations")
    out = []
    for case in cases:
        transform = getattr(semantic, case["class"])("text", ["perturbed"], num_perturbations=1, **case["args"])
        transform.rng = Scripted(case["draws"])
        out.append({**case, "output": transform.perturb(case["text"])[0]})
    return out


def main(inputs: dict[str, Any], files: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        sys.path.insert(0, str(mirror_helm(files / "correct_to_misspelling.json", Path(scratch))))
        assert "helm" not in sys.modules
        import helm
        from helm.benchmark.augmentations.perturbation import PerturbationSpec, create_perturbation

        assert Path(helm.__file__).parent == Path(scratch) / "helm"
        seeds = inputs["seeds"]
        perturbations = {
            name: create_perturbation(PerturbationSpec(class_name=spec["class"], args=_arguments(spec["args"], files)))
            for name, spec in inputs["presets"].items()
        }
        cases = [
            {"preset": name, **record}
            for name, perturbation in perturbations.items()
            for data in inputs["instances"]
            for record in _run_one(perturbation, data, seeds)
        ]
        crashes = [
            {"preset": crash["preset"], "kept": crash["kept"], **record}
            for crash in inputs["crashes"]
            for record in _run_one(perturbations[crash["preset"]], crash["instance"], [None])
        ]
        helm_presets = _helm_presets(inputs["presets"])
    return {
        "instances": inputs["instances"],
        "presets": inputs["presets"],
        "helm_presets": helm_presets,
        "cases": cases,
        "crash_instances": [crash["instance"] for crash in inputs["crashes"]],
        "crashes": crashes,
        "scripted": _fmeval(inputs["scripted"]),
    }


if __name__ == "__main__":
    run(main)
