"""Perturbed variants end to end: item ids, selection, HELM worst case and the other derived numbers, gates,
``-n 2`` against ``-n 0``, and a property test that shrinks to the word that flips a scripted model."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

# The report's bootstrap imports numpy. Import it here, not first inside an in-process run: pytester unloads the
# modules a run imported, and numpy's C core cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest

from tests.conformance import golden
from tests.plugin.test_xdist import _close_floats

HIVE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def hive():
    yield Instance(id="bees", input="Do Bees sting?", references=("Yes",))
    yield Instance(id="ants", input="Do ants sting?", references=("No",))
    yield Instance(id="cats", input="do cats purr", references=("No",))

@pytest.mark.holistic(hive, adapter="generation", max_train_instances=0, max_tokens=2, metrics=("exact_match",),
                      perturbations=("lowercase",) {extra})
def test_hive(instance, completion):
    pass
"""

RULES = {"generate": {"Bees": " Yes"}, "default": " No"}


def _write_model(pytester: pytest.Pytester, rules: dict) -> str:
    path = pytester.path / "rules.json"
    path.write_text(json.dumps(rules))
    return f"scripted:{path}"


def _report(root: Path) -> dict:
    return json.loads(next((root / "reports").glob("*/latest/report.json")).read_text())


def test_variant_items_are_selectable_and_dropped_when_unchanged(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE.replace("{extra}", ""))
    model = _write_model(pytester, RULES)
    listed = pytester.runpytest("--model", model, "--co", "-q")
    # "do cats purr" is lowercase already: its variant would equal it, so it is dropped (HELM's rule).
    listed.stdout.fnmatch_lines(
        [
            "test_hive.py::test_hive[bees]",
            "test_hive.py::test_hive[bees~lowercase]",
            "test_hive.py::test_hive[ants]",
            "test_hive.py::test_hive[ants~lowercase]",
            "test_hive.py::test_hive[cats]",
            "5 tests collected*",
        ]
    )
    chosen = pytester.runpytest("--model", model, "--co", "-q", "-k", "lowercase")
    chosen.stdout.fnmatch_lines(["*bees~lowercase*", "*ants~lowercase*", "2/5 tests collected (3 deselected)*"])


def test_worst_case_before_after_delta_and_consistency_by_hand(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE.replace("{extra}", ""))
    result = pytester.runpytest("--model", _write_model(pytester, RULES), "-p", "no:randomly")
    result.assert_outcomes(passed=5)
    run = _report(pytester.path)["runs"][0]
    # bees: right (Yes), then "do bees sting?" loses the capital B the script keys on: No, wrong -> worst 0.
    # ants: right (No) both ways -> worst 1. cats: no variant, keeps its own score 1 (HELM counts it).
    metrics = run["metrics"]
    assert metrics["exact_match"]["value"] == pytest.approx(1.0)
    assert metrics["robustness.exact_match"]["value"] == pytest.approx(2 / 3)
    assert metrics["robustness.exact_match"]["n"] == 3
    assert metrics["robustness.exact_match"]["family"] == "robustness"
    # fmeval's mean |change|: bees 1, ants 0, cats 0 (its dropped variant is identical: no change).
    assert metrics["robustness.delta.exact_match"]["value"] == pytest.approx(1 / 3)
    # Dynaboard, over the variants that ran: the prediction moved on bees, not on ants; cats had no variant.
    assert metrics["robustness.consistency"]["value"] == pytest.approx(1 / 2)
    assert metrics["robustness.consistency"]["n"] == 2
    low, high = metrics["robustness.exact_match"]["ci95"]
    assert low <= 2 / 3 <= high
    table = run["perturbations"]["lowercase"]
    assert (table["changed"], table["unchanged"], table["flipped"]) == (2, 1, 1)
    numbers = table["metrics"]["exact_match"]
    # One perturbation counts only the instances it changed: bees and ants.
    assert numbers["before"]["value"] == pytest.approx(1.0)
    assert numbers["after"]["value"] == pytest.approx(0.5)
    assert numbers["worst"]["value"] == pytest.approx(0.5)
    assert numbers["worst"]["n"] == 2
    variants = [record for record in run["instances"] if record["perturbation"] == "lowercase"]
    assert sorted(record["instance"]["input"] for record in variants) == ["do ants sting?", "do bees sting?"]
    assert all(record["instance_id"] in ("bees", "ants") for record in variants)
    result.stdout.fnmatch_lines(
        [
            "*robustness.exact_match ↑*0.667*n=3*",
            "*lowercase: exact_match 1.000 -> 0.500 (worst 0.500) on 2 changed instance(s), 1 changed the answer*",
        ]
    )


def test_gate_on_robustness_fails_with_value_interval_and_n(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE.replace("{extra}", ", gates=('robustness.exact_match >= 0.8',)"))
    result = pytester.runpytest("--model", _write_model(pytester, RULES))
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["*hive robustness.exact_match = 0.6667 (95% CI *, n=3) does not meet >= 0.8*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_gate_on_a_family_that_did_not_run_names_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE.replace("{extra}", ""))
    result = pytester.runpytest("--model", _write_model(pytester, RULES), "--holistic-gate", "fairness.exact_match>=0.5")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["*fairness.exact_match*add --holistic-perturb fairness*"])


def test_variants_without_their_originals_count_nowhere_and_a_gate_says_why(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE.replace("{extra}", ""))
    model = _write_model(pytester, RULES)
    result = pytester.runpytest("--model", model, "-k", "lowercase", "--holistic-gate", "robustness.exact_match>=0.5")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*note  2 variant item(s) of 2 instance(s) (e.g. ants) ran without their original*",
            "*gate FAILED*recorded metric 'robustness.exact_match'; hive: 2 variant item(s)*select the originals too*",
        ]
    )
    assert "robustness.exact_match" not in _report(pytester.path)["runs"][0]["metrics"]


def test_gate_on_variants_with_perturbations_false_is_a_collection_error(pytester: pytest.Pytester) -> None:
    source = HIVE.replace("{extra}", ", gates=('robustness.exact_match >= 0.5',)").replace('("lowercase",)', "False")
    pytester.makepyfile(test_hive=source)
    result = pytester.runpytest("--model", _write_model(pytester, RULES))
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*gate 'robustness.exact_match>=0.5' needs perturbed variants but the marker says perturbations=False*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_contrast_sets_on_a_scenario_without_any_is_a_skip_line_and_a_gate_says_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE.replace("{extra}", ""))
    model = _write_model(pytester, RULES)
    result = pytester.runpytest(
        "--model", model, "--holistic-perturb", "equivariance", "--holistic-gate", "equivariance.exact_match>=0.5"
    )
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*skipped  contrast_sets not run*",
            "*gate FAILED*'equivariance.exact_match'; hive: contrast_sets not run: no instance of this scenario has a contrast*",
        ]
    )


def test_unknown_perturbation_is_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hive=HIVE.replace("{extra}", "").replace('("lowercase",)', '("typoes_hard",)'))
    result = pytester.runpytest("--model", _write_model(pytester, RULES))
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*unknown perturbation 'typoes_hard'; did you mean 'typos_hard'?*"])
    assert "Traceback" not in result.stdout.str()
    flag = pytester.runpytest("--model", _write_model(pytester, RULES), "--holistic-perturb", "robustnes")
    assert flag.ret == pytest.ExitCode.USAGE_ERROR
    flag.stderr.fnmatch_lines(["*--holistic-perturb: unknown perturbation 'robustnes'; did you mean 'robustness'?*"])


PEOPLE = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def people():
    yield Instance(id="p1", input="John said that he is going to the store with his sister.", references=("store",))
    yield Instance(id="p2", input="Is it true that Emily and her brother are not at home today?", references=("Yes",))
    yield Instance(id="p3", input="The capital of France is", references=("Paris",))
    yield Instance(id="p4", input="It is late, said Adam to his father, and he is tired.", references=("Adam",))
    yield Instance(id="p5", input="With this film the director has given us nothing new.", references=("No",))

@pytest.mark.holistic(people, adapter="generation", max_train_instances=0, max_tokens=3,
                      metrics=("exact_match", "quasi_exact_match", "f1_score"))
def test_people(instance, completion):
    pass
"""


def _numbers(report: dict) -> dict:
    """Everything perturbations add, and every record's answer: what must not depend on the worker count."""
    runs = []
    for run in report["runs"]:
        metrics = {name: value for name, value in run["metrics"].items() if value["family"] != "efficiency"}
        answers = sorted((record["nodeid"], record["completion"]["text"]) for record in run["instances"])
        runs.append({"metrics": metrics, "perturbations": run["perturbations"], "answers": answers})
    return {"runs": runs, "gates": report["gates"]}


def test_robustness_and_fairness_are_the_same_with_two_workers(
    pytester: pytest.Pytester, tiny_gpt2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One thread in every process, so a worker's share of the cores cannot round a near-tied greedy token the other
    # way on the perturbed prompts (test_xdist.py compares the default thread split).
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    pytester.makepyfile(test_people=PEOPLE)
    shutil.copytree(golden.files("perturbations"), pytester.path / "lists")  # HELM's formats: every worker reads them
    common = ["--model", str(tiny_gpt2), "--holistic-perturb", "robustness,fairness", "--holistic-gate", "fairness.f1_score>=0"]
    common += ["--holistic-word-lists", "lists"]
    serial = pytester.runpytest_subprocess(*common, "--holistic-report-dir", "serial", timeout=300)
    parallel = pytester.runpytest_subprocess(*common, "-n", "2", "--holistic-report-dir", "parallel", timeout=300)
    assert serial.ret == parallel.ret == 0
    one = json.loads(next((pytester.path / "serial").glob("*/latest/report.json")).read_text())
    two = json.loads(next((pytester.path / "parallel").glob("*/latest/report.json")).read_text())
    assert _close_floats(_numbers(one), _numbers(two)) == []  # texts and labels exactly, numbers to float32 rounding
    run = one["runs"][0]
    labels = {record["perturbation"] for record in run["instances"]}
    assert labels == {None, "mild_mix", "dialect", "gender_pronouns", "person_name"}
    for family in ("robustness", "fairness"):
        for metric in ("exact_match", "quasi_exact_match", "f1_score"):
            assert run["metrics"][f"{family}.{metric}"]["n"] == 5
    # Fairness changes the references with the input: John -> a Black male first name in both.
    john = next(r for r in run["instances"] if r["instance_id"] == "p1" and r["perturbation"] == "gender_pronouns")
    assert " she " in john["instance"]["input"] and " her sister" in john["instance"]["input"]
    assert run["perturbations"]["gender_pronouns"]["family"] == "fairness"
    assert run["perturbations"]["gender_pronouns"]["params"]["prob"] == 1.0
    assert [gate["status"] for gate in one["gates"]] == ["passed"]
    # The word lists read, with their digests, are in the provenance of both runs alike (_numbers compared them).
    read = {name: entry.get("word_lists") for name, entry in run["perturbations"].items()}
    assert set(read) == {"mild_mix", "dialect", "gender_pronouns", "person_name"} and read["gender_pronouns"] is None
    assert read["person_name"]["person_names"]["file"] == str((pytester.path / "lists" / "person_names.txt").resolve())


PROPERTY = """
import pytest
from hypothesis import given
from pytest_holistic import Instance, scenario
from pytest_holistic.perturbations import holistic_settings, typos

@scenario
def hive():
    yield Instance(id="workers", input="Are worker bees female members of the colony", references=("Yes",))

@pytest.mark.holistic(hive, adapter="generation", max_train_instances=0, max_tokens=2, metrics=("exact_match",))
def test_typos_keep_the_answer(instance, completion, answer):
    @given(text=typos(of=instance.input, prob=0.5))
    @holistic_settings
    def same_answer(text):
        changed = answer(text).text
        answer(text.upper())  # asked after the falsifying input: the report must still name the falsifying one
        assert changed == completion.text

    same_answer()
"""


def test_property_test_shrinks_to_the_word_that_flips_the_model(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "1")  # holistic_settings derandomises in CI: the same search every run
    pytester.makepyfile(test_prop=PROPERTY)
    model = _write_model(pytester, {"generate": {"bees": " Yes"}, "default": " No"})
    result = pytester.runpytest_subprocess("--model", model, "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(failed=1)
    record = _report(pytester.path)["runs"][0]["instances"][0]
    found = record["counterexample"]
    # Only a change to "bees" flips the script's answer; shrinking removes every other typo.
    assert found["changed_words"] == 1
    assert found["change"].startswith("1 change: 'bees' -> ")
    assert found["original"] == "Are worker bees female members of the colony"
    assert found["counterexample"].replace(found["counterexample"].split()[2], "bees") == found["original"]
    assert (found["original_answer"], found["counterexample_answer"], found["answer_changed"]) == ("Yes", "No", True)
    result.stdout.fnmatch_lines(["*minimal counterexample (1 change: 'bees' -> *) changes the answer: 'Yes' -> 'No'*"])
    result.stdout.fnmatch_lines(["*counterexample workers: minimal counterexample (1 change: 'bees' -> *"])


def test_synonym_without_wordnet_is_one_skip_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WNSEARCHDIR", str(tmp_path))  # an empty folder: no WordNet dict files
    pytester.makepyfile(test_hive=HIVE.replace("{extra}", "").replace('("lowercase",)', '("synonym", "lowercase")'))
    result = pytester.runpytest_subprocess("--model", _write_model(pytester, RULES), timeout=300)
    result.assert_outcomes(passed=5)  # the originals and their lowercase variants; no synonym item
    result.stdout.fnmatch_lines(["*skipped  synonym not run: synonym needs WordNet 3.0*wordnet-base*"])
    run = _report(pytester.path)["runs"][0]
    assert run["perturbation_skips"] and "synonym" not in run["perturbations"]
    assert "Traceback" not in result.stdout.str()


TALK = """
import pytest
from pytest_holistic import Instance, Reference, scenario

@scenario
def talk():
    yield Instance(id="dialect", input={text!r}, references={references!r})

@pytest.mark.holistic(talk, adapter="generation", max_train_instances=0, max_tokens=2, metrics=("exact_match",),
                      perturbations=("dialect",))
def test_talk(instance, completion):
    pass
"""


def test_word_lists_option_gives_helms_variant_and_names_the_file(pytester: pytest.Pytester) -> None:
    data = golden.load("perturbations")
    (instance,) = [i for i in data["instances"] if i["id"] == "dialect"]
    references = tuple((r["text"], r["correct"]) for r in instance["references"])  # perturbed first: they move the stream
    (case,) = [c for c in data["cases"] if (c["preset"], c["instance"], c["seed"]) == ("dialect", "dialect", None)]
    folder = pytester.path / "helm" / "benchmark_output" / "perturbations" / "dialect"  # where HELM downloads it
    folder.mkdir(parents=True)
    mapping = folder / "SAE_to_AAVE_mapping.json"
    shutil.copy(golden.files("perturbations") / mapping.name, mapping)
    source = TALK.replace("{text!r}", repr(instance["input"]))
    pytester.makepyfile(test_talk=source.replace("{references!r}", f"tuple(Reference(*r) for r in {references!r})"))
    result = pytester.runpytest("--model", _write_model(pytester, RULES), "--holistic-word-lists", "helm/benchmark_output")
    result.assert_outcomes(passed=2)
    run = _report(pytester.path)["runs"][0]
    (variant,) = [record for record in run["instances"] if record["perturbation"] == "dialect"]
    assert variant["instance"]["input"] == case["output"]["input"]  # what HELM's own code made of it
    assert [r["text"] for r in variant["instance"]["references"]] == [r["text"] for r in case["output"]["references"]]
    assert run["perturbations"]["dialect"]["word_lists"] == {
        "dialect": {
            "file": str(mapping.resolve()),
            "sha256": hashlib.sha256(mapping.read_bytes()).hexdigest(),
            "origin": "user's copy of HELM's file",
        }
    }


def test_word_lists_option_errors_are_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_talk=TALK.replace("{text!r}", repr(" with this ")).replace("{references!r}", "('x',)"))
    model = _write_model(pytester, RULES)
    missing = pytester.runpytest("--model", model, "--holistic-word-lists", "nowhere")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(
        ["ERROR: pytest-holistic: --holistic-word-lists: */nowhere is not a folder; give the folder holding*"]
    )
    (pytester.path / "lists").mkdir()
    (pytester.path / "lists" / "SAE_to_AAVE_mapping.json").write_text("{'with': ['wit']}")
    pytester.makeini("[pytest]\nholistic_word_lists = lists\n")
    broken = pytester.runpytest("--model", model)
    assert broken.ret == pytest.ExitCode.USAGE_ERROR
    broken.stderr.fnmatch_lines(
        ["ERROR: pytest-holistic: word list */lists/SAE_to_AAVE_mapping.json: not JSON (*); it must be HELM's*"]
    )
    assert "Traceback" not in broken.stderr.str() + broken.stdout.str()
    (pytester.path / "lists" / "SAE_to_AAVE_mapping.json").write_text('{"with": ["wit"]}')
    fixed = pytester.runpytest("--model", model)  # the ini value, relative to the ini file
    fixed.assert_outcomes(passed=2)
