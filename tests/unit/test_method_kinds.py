"""Every per-method fact is in ``methods.KINDS``: a method entered there (with its class) is a whole method, and no
module outside the method's class and its entry tells methods apart by name."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from pytest_holistic.adaptation import examples_by_group, make_spec
from pytest_holistic.errors import UserError
from pytest_holistic.methods import KINDS
from pytest_holistic.metrics import known_names
from pytest_holistic.runspec import build_run, check_marker_values
from pytest_holistic.scenarios import Instance, Reference, Scenario

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_holistic"
OPTIONS = (Reference("yes", True, 1), Reference("no", False, 0))
SCENARIO = Scenario("kinds", local=[Instance(f"i{k}", f"document {k}", OPTIONS) for k in range(4)])


@pytest.mark.parametrize("method", list(KINDS))
def test_a_run_without_metrics_gets_its_kinds_default_metrics(method: str, tmp_path: Path) -> None:
    kind = KINDS[method]
    assert kind.default_metrics, f"{method} declares no default metrics"
    assert set(kind.default_metrics) <= set(known_names())
    run = build_run(f"t.py::test_{method}", (SCENARIO,), {"adapter": method}, "local", None, tmp_path)
    assert run.metric_plan.names[: len(kind.default_metrics)] == kind.default_metrics


@pytest.fixture
def extra_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Methods entered in KINDS and nowhere else: a generation with other default metrics, and a copy of each
    method that has a fact of its own, under a new name."""
    kinds = KINDS
    assert isinstance(kinds, dict)
    monkeypatch.setitem(kinds, "terse_generation", dataclasses.replace(KINDS["generation"], default_metrics=("exact_match",)))
    monkeypatch.setitem(kinds, "documents_again", KINDS["language_modeling"])
    monkeypatch.setitem(kinds, "pairs_again", KINDS["ranking"])
    monkeypatch.setitem(kinds, "letters_again", KINDS["multiple_choice_joint"])


@pytest.mark.usefixtures("extra_kinds")
def test_a_method_entered_only_in_kinds_runs_with_its_own_defaults(tmp_path: Path) -> None:
    run = build_run("t.py::test_terse", (SCENARIO,), {"adapter": "terse_generation"}, "local", None, tmp_path)
    assert run.metric_plan.names == ("exact_match",)
    assert run.adapter.spec.method == "terse_generation"
    documents = build_run("t.py::test_documents", (SCENARIO,), {"adapter": "documents_again"}, "local", None, tmp_path)
    assert documents.metric_plan.names == KINDS["language_modeling"].default_metrics


@pytest.mark.usefixtures("extra_kinds")
def test_the_markers_rules_follow_the_facts_of_the_kind_not_its_name() -> None:
    with pytest.raises(UserError, match="0: documents_again scores documents without few-shot examples"):
        check_marker_values("t.py::t", {"max_train_instances": 2}, "documents_again")
    with pytest.raises(UserError, match="documents_again scores the document exactly as it is"):
        check_marker_values("t.py::t", {"input_prefix": "Text: "}, "documents_again")
    check_marker_values("t.py::t", {"chunk_words": 64, "max_tokens": 0}, "documents_again")
    with pytest.raises(UserError, match="applies only to adapter='language_modeling' or adapter='documents_again'"):
        check_marker_values("t.py::t", {"chunk_words": 64}, "terse_generation")
    with pytest.raises(UserError, match="an even whole number"):
        check_marker_values("t.py::t", {"max_train_instances": 3}, "pairs_again")
    with pytest.raises(UserError, match="a letter or digit"):
        check_marker_values("t.py::t", {"reference_prefix": "- "}, "letters_again")
    with pytest.raises(UserError, match="tokens to generate"):
        check_marker_values("t.py::t", {"max_tokens": 0}, "terse_generation")


@pytest.mark.usefixtures("extra_kinds")
def test_paired_examples_count_training_queries_by_their_two_blocks() -> None:
    train = [Instance(f"t{k}", f"query {k}", OPTIONS, split="train") for k in range(6)]
    assert len(examples_by_group(make_spec("pairs_again", max_train_instances=4), train)[None]) == 2
    assert len(examples_by_group(make_spec("terse_generation", max_train_instances=4), train)[None]) == 4


def _method_name_comparisons(path: Path) -> list[str]:
    """``x.method == "ranking"``, ``method in ("generation", ...)``: a method told apart by its name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = [
            value
            for side in sides
            for value in ([side] if isinstance(side, ast.Constant) else getattr(side, "elts", []))
            if isinstance(value, ast.Constant) and value.value in KINDS
        ]
        if named and any("method" in ast.unparse(side) for side in sides):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_tells_methods_apart_by_name() -> None:
    assert [line for path in sorted(PACKAGE.rglob("*.py")) for line in _method_name_comparisons(path)] == []
