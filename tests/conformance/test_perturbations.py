"""Conformance: every HELM preset the project offers makes exactly the variants HELM 0.5.16's own code made.

The golden (``golden/perturbations.json``, from ``generate_goldens.py --only perturbations``) holds, per preset,
instance and seed, HELM's variant or "dropped"; both sides read the same word lists in HELM's formats
(``golden/perturbations/``), the project's through ``--holistic-word-lists``'s code path. fmeval's three are
compared per character on fixed draws. The project keeps the word where HELM raises.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic.perturbations import catalog, wordlists
from pytest_holistic.perturbations import fmeval as project_fmeval
from pytest_holistic.scenarios.instance import Contrast, Instance, Reference
from tests.conformance import golden

GOLDEN = golden.load("perturbations")
FILES = golden.files("perturbations")
LISTS = wordlists.find(FILES, "--holistic-word-lists")
INSTANCES = {data["id"]: data for data in [*GOLDEN["instances"], *GOLDEN["crash_instances"]]}
PRESETS = sorted({case["preset"] for case in GOLDEN["cases"]})


def _references(items: list[dict[str, Any]]) -> tuple[Reference, ...]:
    return tuple(Reference(item["text"], item["correct"]) for item in items)


def _instance(data: dict[str, Any]) -> Instance:
    contrasts = tuple(Contrast(c["input"], _references(c["references"])) for c in data.get("contrasts", ()))
    return Instance(data["id"], data["input"], _references(data["references"]), contrasts=contrasts)


def _content(variant: Instance) -> dict[str, Any]:
    return {"input": variant.input, "references": [{"text": r.text, "correct": r.correct} for r in variant.references]}


def _project(preset: str, case: dict[str, Any], *, as_helm_id: bool = False) -> dict[str, Any] | str:
    """The project's variant of the case's instance; ``as_helm_id``: the instance under a pytest id of the project's
    own, carrying the golden's id (HELM's ``instance.id``) as its ``helm_id``, as a scenario that follows HELM does."""
    (perturbation,) = catalog.resolve([preset], LISTS)
    instance = _instance(INSTANCES[case["instance"]])
    if as_helm_id:
        instance = replace(instance, id=f"project-{instance.id}", helm_id=instance.id)
    made = perturbation.variants_of(instance, case["seed"])
    assert len(made) <= 1
    return _content(made[0]) if made else "dropped"


def _helm(case: dict[str, Any]) -> dict[str, Any] | str:
    return "dropped" if case["dropped"] else case["output"]


def test_the_golden_covers_every_helm_preset_the_project_offers() -> None:
    offered = set(catalog.PERTURBATIONS) - {"synonym", *(p.name for p in project_fmeval.PRESETS)}
    assert set(PRESETS) == offered
    # Each preset's class and arguments are those of a HELM run_expander preset (checked by HELM's own table).
    assert {name: bool(found) for name, found in GOLDEN["helm_presets"].items()} == dict.fromkeys(offered, True)
    assert not [case for case in GOLDEN["cases"] if "error" in case]


@pytest.mark.parametrize("preset", PRESETS)
def test_preset_makes_helms_variants(preset: str) -> None:
    cases = [case for case in GOLDEN["cases"] if case["preset"] == preset]
    wrong = [
        f"{case['instance']} seed={case['seed']}: HELM {_helm(case)!r}, ours {ours!r}"
        for case in cases
        if (ours := _project(preset, case)) != _helm(case)
    ]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ:\n" + "\n".join(wrong[:5])


@pytest.mark.parametrize("preset", PRESETS)
def test_a_helm_id_draws_helms_variant_under_any_pytest_id(preset: str) -> None:
    """HELM seeds with ``Random(instance.id)``; an instance whose pytest id differs from HELM's id draws HELM's
    variant through its ``helm_id``, never through its pytest id."""
    cases = [case for case in GOLDEN["cases"] if case["preset"] == preset]
    wrong = [case["instance"] for case in cases if _project(preset, case, as_helm_id=True) != _helm(case)]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. {wrong[:5]}"


@pytest.mark.parametrize("case", GOLDEN["crashes"], ids=lambda case: case["instance"])
def test_where_helm_raises_the_word_is_kept(case: dict[str, Any]) -> None:
    ours = _project(case["preset"], case)
    if "error" not in case:  # HELM did not raise after all (an unknown contraction it deletes): the same output
        assert ours == _helm(case)
        return
    assert ours != "dropped" and case["kept"] in ours["input"]


class Scripted:
    """Fixed draws with the oracle's semantics: ``random()`` is the next draw ``u``, a choice takes ``int(u * n)``."""

    def __init__(self, draws: list[float]) -> None:
        self.draws = iter(draws)

    def random(self) -> float:
        return next(self.draws)

    def choice(self, seq: Any) -> Any:
        return seq[int(self.random() * len(seq))]

    def sample(self, population: Any, k: int) -> list[Any]:
        pool = list(population)
        return [pool.pop(int(self.random() * len(pool))) for _ in range(k)]


FMEVAL_ARGUMENTS = {
    "perturbation_prob": "prob",
    "uppercase_fraction": "fraction",
    "add_prob": "add_prob",
    "remove_prob": "remove_prob",
}


@pytest.mark.parametrize("case", GOLDEN["scripted"], ids=lambda case: f"{case['preset']}-{case['text_index']}")
def test_fmeval_per_character_rules_on_fixed_draws(case: dict[str, Any]) -> None:
    transform = getattr(project_fmeval, case["preset"])
    params = {FMEVAL_ARGUMENTS[name]: value for name, value in case["args"].items()}
    assert transform(case["text"], Scripted(case["draws"]), **params) == case["output"]


# -- the option reads HELM's files where HELM keeps them ------------------------------------------------


def test_word_lists_are_found_in_helms_benchmark_output_layout(tmp_path: Path) -> None:
    output = tmp_path / "benchmark_output" / "perturbations"
    (output / "dialect").mkdir(parents=True)
    (output / "person_name" / "data").mkdir(parents=True)
    shutil.copy(FILES / "SAE_to_AAVE_mapping.json", output / "dialect")
    shutil.copy(FILES / "person_names.txt", output / "person_name" / "data")
    package = tmp_path / "helm" / "benchmark" / "augmentations"  # a site-packages folder holding HELM's package
    package.mkdir(parents=True)
    shutil.copy(FILES / "correct_to_misspelling.json", package)
    for folder in (tmp_path, tmp_path / "benchmark_output"):
        lists = wordlists.find(folder, "--holistic-word-lists")
        assert lists.dialect == (output / "dialect" / "SAE_to_AAVE_mapping.json").resolve()
        assert lists.person_names == (output / "person_name" / "data" / "person_names.txt").resolve()
    assert wordlists.find(tmp_path, "x").misspellings == (package / "correct_to_misspelling.json").resolve()
    # The same variants as from the flat folder the golden was checked with.
    flat = wordlists.find(FILES, "x")
    nested = wordlists.find(tmp_path, "x")
    instance = _instance(INSTANCES["paragraph"])
    for name in ("dialect", "person_name", "misspellings_hard", "mild_mix"):
        (one,), (two,) = catalog.resolve([name], flat), catalog.resolve([name], nested)
        assert one.variants_of(instance) == two.variants_of(instance)
        assert one.describe()["word_lists"] != two.describe()["word_lists"]  # other paths, same sha256
        assert [v["sha256"] for v in one.describe()["word_lists"].values()] == [
            v["sha256"] for v in two.describe()["word_lists"].values()
        ]


def test_same_instance_and_seed_give_the_same_variant_in_any_order() -> None:
    (preset,) = catalog.resolve(["dialect_hard"], LISTS)
    instance = _instance(INSTANCES["dialect"])
    first = preset.variants_of(instance)
    random.Random(0).random()  # no module-level stream: other draws do not matter
    assert preset.variants_of(instance) == first
