"""The instances HELM's own scenario classes build from a scenario's rows (golden/scenarios.json) are the project's.

Per case, the same rows that HELM's class read from its download files are loaded through the suite's own
``Scenario``: the shipped file (``offline``) or a ``--holistic-data-dir`` copy of the rows in the hub's schema
(``hub``). Per split, in order, the project's instances must have HELM's input text, HELM's correct references
(and, where HELM lists the wrong options too, all of them in HELM's order), HELM's contrast sets, and
``helm_id`` equal to the id HELM's runner gives the instance. A scenario HELM 0.5.16 lacks is listed in the golden.

HELM Lite's scenarios (suites/lite) are compared the same way: GSM8K, MedQA, WMT14 and LegalBench (one case per
language pair and per task), MMLU on Lite's own file of its five subjects, and MATH once per subject as HELM runs it, and also
against HELM's run without chain of thought, which the suite lacks: its references are then the last ``\\boxed{}``'s
content of the suite's solutions (``boxed_answer``), and where a subject's rows have a solution without one, HELM's class
raises instead (``raises`` in the golden), which the project's rows must explain.

Dyck and synthetic reasoning have no rows: HELM's classes generate their instances from a seed, and so do the
project's generators. ``seeded`` cases load the suite's scenario, ``helm_run`` cases call the generator as HELM's
run builds its class; where the golden lists part of HELM's instances, a digest of all of them is compared too.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic.metrics.math_answers import boxed_answer
from pytest_holistic.scenarios import Instance, Scenario, synthetic
from pytest_holistic.scenarios.bbq_tags import read_bbq_tags
from pytest_holistic.scenarios.synthetic.bbq import bbq_instance
from tests.conformance import golden
from tests.conformance.inputs import scenarios as inputs
from tests.conformance.inputs.prompts import load_suite

ALL_SUITES = Path(__file__).resolve().parents[2] / "suites"
SUITES = ALL_SUITES / "core"
GOLDEN = golden.load("scenarios")
CASES = [case for case in GOLDEN["cases"] if case["edition"] != "generated" and "raises" not in case]
RAISING = [case for case in GOLDEN["cases"] if "raises" in case]
GENERATED = [case for case in GOLDEN["cases"] if case["edition"] == "generated"]
LETTERS = "ABC"


def case_id(case: dict[str, Any]) -> str:
    parts = (case["scenario"], case.get("group"), *case.get("call", []), case["edition"])
    return "-".join(str(part) for part in parts if part)


def suite_file(case: dict[str, Any]) -> str:
    """The case's suite file relative to suites/: a core suite's is named alone (``test_boolq.py``), others with their
    folder (``lite/test_gsm8k.py``)."""
    return case["suite"] if "/" in case["suite"] else f"core/{case['suite']}"


def suite_base(case: dict[str, Any]) -> Path:
    """The suite's folder, where its scenario's files (``data/...``) are found."""
    return (ALL_SUITES / suite_file(case)).parent


def suite_scenario(case: dict[str, Any]) -> Scenario:
    found = getattr(load_suite(suite_file(case)), case["attribute"])
    if "call" in case:  # a suite that builds one scenario per subset (RAFT)
        found = found(*case["call"])
    assert isinstance(found, Scenario)
    return found


def load(case: dict[str, Any], tmp_path: Path) -> tuple[Instance, ...]:
    if case["edition"] == "helm_run":
        generator = case["generator"]
        made = getattr(synthetic, generator["name"])(**generator["arguments"])
        assert isinstance(made, Scenario)
        return made.load("local").instances
    scenario = suite_scenario(case)
    base = suite_base(case)
    if case["edition"] == "seeded":
        return scenario.load("local", base=base).instances
    if case["edition"] == "offline":
        shipped = base / "data" / case["data"]
        assert _sha256(shipped) == case["data_sha256"], f"{shipped} changed since the golden; regenerate: {GOLDEN['regenerate']}"
        return scenario.load("local", base=base).instances
    hub = case["hub"]
    rows = inputs.hub_rows(case["suite"], case["scenario"])
    assert inputs.rows_sha256(rows) == hub["rows_sha256"], f"the hub rows changed; regenerate: {GOLDEN['regenerate']}"
    folder = tmp_path / hub["name"] / (hub["config"] or "")
    folder.mkdir(parents=True)
    for split, split_rows in rows.items():
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in split_rows), encoding="utf-8")
    return scenario.load("hub", base=base, data_dir=tmp_path).instances


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_by_helm(case: dict[str, Any], instances: Sequence[Instance]) -> list[Instance]:
    """The project's instances that HELM's run reads: its splits, and one group in a per-group case."""
    return [
        instance
        for instance in instances
        if instance.split in case["splits"] and (case.get("group") is None or instance.group == case["group"])
    ]


def last_boxed(instances: Sequence[Instance]) -> list[Instance]:
    """HELM's MATH run without chain of thought, from the suite's: each reference the last ``\\boxed{}``'s content."""
    found = []
    for instance in instances:
        references = []
        for ref in instance.references:
            answer = boxed_answer(ref.text)
            assert answer is not None, f"{instance.id}: a solution without a \\boxed{{}} answer, where HELM's run raised nothing"
            references.append(replace(ref, text=answer))
        found.append(replace(instance, references=tuple(references)))
    return found


def helm_records(case: dict[str, Any], instances: Sequence[Instance]) -> list[dict[str, Any]]:
    """The instances as HELM's oracle records them (id, HELM's split, input, references tagged ``correct``)."""
    return [
        {
            "id": instance.helm_id,
            "split": case["splits"][instance.split],
            "input": instance.input,
            "references": [{"text": ref.text, "tags": ["correct"] if ref.correct else []} for ref in instance.references],
        }
        for instance in instances
    ]


def check_digest(case: dict[str, Any], ours: Sequence[Instance]) -> None:
    """All of HELM's instances, in HELM's order, through the digest the golden keeps of them."""
    assert len(ours) == case["instances_count"], f"{len(ours)} instances, HELM has {case['instances_count']}"
    encoded = json.dumps(helm_records(case, ours), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert hashlib.sha256(encoded.encode()).hexdigest() == case["instances_sha256"], (
        "the instances the golden lists are HELM's, but not all the others: their digest differs"
    )


def correct(references: Sequence[dict[str, Any]]) -> list[str]:
    return [ref["text"] for ref in references if "correct" in ref["tags"]]


def check_references(what: str, ours: Instance, references: Sequence[dict[str, Any]]) -> None:
    if not references:  # HELM's class gives none (RealToxicityPrompts): its metrics read no reference
        return
    assert list(ours.correct_references) == correct(references), f"{what}: correct references"
    if any("correct" not in ref["tags"] for ref in references):  # HELM lists the options: the same, in its order
        assert list(ours.choices) == [ref["text"] for ref in references], f"{what}: options"
    else:  # HELM gives the right answer only; the project may list the other labels as wrong options
        assert set(correct(references)) <= set(ours.choices), f"{what}: references"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_instances_are_helms(case: dict[str, Any], tmp_path: Path) -> None:
    """Each of HELM's instances, in HELM's order, has one project instance with its id as helm_id and its content.

    HELM's id is its position (``id{n}``), so pairing by id also checks the order HELM gives the rows.
    """
    ours = read_by_helm(case, load(case, tmp_path))
    if case.get("helm_reference") == "last_boxed":
        ours = last_boxed(ours)
    helm = case["instances"]
    everything = ours
    if "instances_sha256" in case:  # the golden lists some of HELM's instances, first compared one by one
        listed = {theirs["id"] for theirs in helm}
        ours = [instance for instance in ours if instance.helm_id in listed]
    assert len(ours) == len(helm), f"{len(ours)} instances, HELM has {len(helm)}"
    if not case.get("helm_ids", True):  # HELM's order is not in these rows: no id, and matched by text instead
        assert all(instance.helm_id is None for instance in ours), f"no HELM id expected: {case['helm_ids_reason']}"
        by_text = {instance.input: instance for instance in ours}
        assert len(by_text) == len(ours)
        ours = [replace(by_text[theirs["input"]], helm_id=theirs["id"]) for theirs in helm]
    by_id = {instance.helm_id: instance for instance in ours}
    assert len(by_id) == len(ours), "two instances share a helm_id"
    for position, theirs in enumerate(helm):
        assert theirs["id"] in by_id, f"HELM's instance {position} ({theirs['id']}): no instance has this helm_id"
        mine = by_id[theirs["id"]]
        what = f"HELM {theirs['id']} ({mine.id})"
        assert case["splits"][mine.split] == theirs["split"], f"{what}: split"
        assert mine.input == theirs["input"], f"{what}: input"
        check_references(what, mine, theirs["references"])
        contrasts = theirs.get("contrasts", [])
        assert [c.input for c in mine.contrasts] == [c["input"] for c in contrasts], f"{what}: contrast inputs"
        for number, (edit, given) in enumerate(zip(mine.contrasts, contrasts)):
            assert [r.text for r in edit.references if r.correct] == correct(given["references"]), f"{what}: contrast {number}"
    if "instances_sha256" in case:
        check_digest(case, everything)


@pytest.mark.parametrize("case", RAISING, ids=case_id)
def test_helm_raises_where_a_solution_has_no_boxed_answer(case: dict[str, Any], tmp_path: Path) -> None:
    """HELM 0.5.16's MATH run without chain of thought skips a row whose solution has no ``\\boxed{}`` answer when it
    sets the answers, then reads every row's answer: ``KeyError: 'answer'``. The golden records that for a subject;
    the project's rows of that subject must include such a solution (``boxed_answer`` None), and nothing else may fail."""
    assert case["raises"] == "KeyError: 'answer'", f"HELM raised something else: {case['raises']}"
    ours = read_by_helm(case, load(case, tmp_path))
    unboxed = [instance.id for instance in ours if any(boxed_answer(ref.text) is None for ref in instance.references)]
    assert unboxed, "HELM's run raised, but every solution of the subject has a \\boxed{} answer"


@pytest.mark.parametrize("case", GENERATED, ids=case_id)
def test_bbq_rows_become_helms_instances(case: dict[str, Any]) -> None:
    """The suite's generated BBQ rows, read by HELM's BBQScenario and by ``bbq_instance``: the same input, options and
    right option, and the same target, non-target and unknown options (HELM's letters in every reference's tags).

    HELM shuffles and splits the rows its own way, which the generated suite does not follow: matched by text."""
    ours = {}
    for row in case["bbq_rows"]:
        instance = bbq_instance(row, f"row-{row['example_id']}")
        ours[(instance.input, instance.choices)] = instance
    assert len(ours) == len(case["bbq_rows"]) == len(case["instances"])
    for theirs in case["instances"]:
        mine = ours[(theirs["input"], tuple(ref["text"] for ref in theirs["references"]))]
        what = f"{mine.id} (HELM {theirs['id']})"
        check_references(what, mine, theirs["references"])
        # HELM's tags, after "correct" where present: polarity, context, gold letter, target, non-target, unknown letters
        polarity, context, _, target, non_target, unknown = [t for t in theirs["references"][0]["tags"] if t != "correct"]
        facts = read_bbq_tags(mine.tags)
        assert facts is not None, f"{what}: no BBQ tags"
        assert (facts.negative, facts.ambiguous) == (polarity == "negative", context == "ambiguous"), what
        letter = {None: ""} | {index: LETTERS[index] for index in range(3)}
        assert (letter[facts.target], letter[facts.non_target], letter[facts.unknown]) == (target, non_target, unknown), what


def test_the_golden_names_every_core_scenario() -> None:
    """Each suite of suites/core has a case or a line saying why not, so a new suite cannot slip past the check."""
    covered = {case["suite"] for case in GOLDEN["cases"]} | set(GOLDEN["not_covered"])
    suites = {path.name for path in SUITES.glob("test_*.py")}
    assert suites <= covered, f"suites with neither a case nor a reason: {sorted(suites - covered)}"


def core_declaration(scenario: Scenario) -> tuple[str, str] | None:
    """The core suite file and attribute a Lite suite imported ``scenario`` from (``suites.core.test_x``), if any."""
    for name, module in list(sys.modules.items()):
        if name.startswith("suites.core.test_"):
            for attribute, value in vars(module).items():
                if value is scenario:
                    return f"{name.rpartition('.')[2]}.py", attribute
    return None


def test_the_golden_names_every_lite_scenario() -> None:
    """Each scenario a suites/lite test runs has a case: a Lite one (its suite file and the name of the scenario the case
    loads), or, for a scenario Lite imports from suites/core unchanged (NarrativeQA, NaturalQuestions, OpenbookQA), the
    core suite's case of that declaration, since Lite reads the same rows through the same object."""
    lite = {(case["suite"], suite_scenario(case).name) for case in GOLDEN["cases"] if "/" in case["suite"]}
    core = {(case["suite"], case["attribute"]) for case in GOLDEN["cases"] if "/" not in case["suite"]}
    missing, seen = [], 0
    for path in sorted((ALL_SUITES / "lite").glob("test_*.py")):
        file = f"lite/{path.name}"
        module = load_suite(file)
        for name, function in sorted(vars(module).items()):
            marks = [mark for mark in getattr(function, "pytestmark", ()) if getattr(mark, "name", "") == "holistic"]
            if not name.startswith("test_") or not marks:
                continue
            scenario = marks[0].args[0]
            assert isinstance(scenario, Scenario), f"{file}::{name}: the holistic marker's first argument"
            seen += 1
            declared = core_declaration(scenario)
            if (declared not in core) if declared else ((file, scenario.name) not in lite):
                missing.append(f"{file}::{name} ({scenario.name}" + (f", from core {declared})" if declared else ")"))
    assert seen > 0, "no Lite test functions found"
    assert not missing, f"Lite scenarios with no scenarios-golden case: {missing}"
