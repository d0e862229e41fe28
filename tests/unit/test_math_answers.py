r"""HELM Lite's GSM8K and MATH answer matching, on answers as models write them (values worked out by hand from the
rules in the module docstring; HELM's own outputs are compared in tests/conformance/test_helm_metrics.py)."""

from __future__ import annotations

import pytest

from pytest_holistic.metrics import (
    BUILTIN,
    Score,
    final_number_exact_match,
    lookup,
    math_equiv,
    math_equiv_chain_of_thought,
)
from pytest_holistic.metrics.math_answers import UnreadableAnswer, boxed_answer, final_number, normalize_math
from pytest_holistic.scenarios import Reference

GSM_SOLUTION = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether.\n#### 72"


def test_the_metrics_are_registered_as_accuracy_metrics_of_an_answer() -> None:
    for name in ("final_number_exact_match", "math_equiv", "math_equiv_chain_of_thought"):
        info = lookup(name)
        assert BUILTIN[name] is info
        assert (info.family, info.kind, info.direction, info.bounds) == ("accuracy", "instance", "higher", (0.0, 1.0))
        assert "HELM" in info.citation


# -- GSM8K: the final number -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "number"),
    [
        (GSM_SOLUTION, "72"),
        ("The answer is 72.", "72"),  # a full stop with no digit after it is no decimal part
        ("It costs $1,234.50 in total", "1234.50"),
        ("The temperature fell to -3 degrees", "-3"),
        ("no number at all", ""),
    ],
)
def test_final_number_is_the_last_number_without_commas(text: str, number: str) -> None:
    assert final_number(text) == number


def test_final_number_exact_match_reads_the_gsm_reference_and_a_wordy_answer() -> None:
    assert final_number_exact_match("So she sold 72 clips in all.", [GSM_SOLUTION]) == 1.0
    assert final_number_exact_match("She sold 71 clips.", [GSM_SOLUTION]) == 0.0
    assert final_number_exact_match("It costs 1234.5", ["1,234.5"]) == 1.0


def test_final_number_exact_match_gives_no_credit_without_a_number() -> None:
    """An answer with no number is an empty one, which scores 0 even when the reference has no number either."""
    assert final_number_exact_match("I don't know", ["unknown"]) == 0.0


def test_the_final_number_keeps_helms_any_character_decimal_point() -> None:
    """HELM's pattern has an unescaped ".": any character between digits joins them, so "2 x 3" ends in "3" but "2x3"
    is one number, and "1, 2" is "1 2". A second decimal point starts a new number: "3.14.15" ends in "15"."""
    assert final_number("2 x 3") == "3"
    assert final_number("2x3") == "2x3"
    assert final_number("3.14.15") == "15"
    assert final_number_exact_match("1, 2", ["1 2"]) == 1.0


# -- MATH: the normal form --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("\\frac{1}{2}", "\\dfrac12"),
        ("\\frac{1}{2}", "1/2"),
        ("\\frac{1}{2}", "0.5"),
        ("\\frac{1}{2}", ".5"),
        ("\\frac{1}{72}", "\\frac1{72}"),
        ("2\\sqrt{3}", "2\\sqrt3"),
        ("(1,2)", "\\left( 1, 2 \\right)"),
        ("90", "90^\\circ"),
        ("5", "\\$5"),
        ("50", "50\\%"),
        ("5", "5\\text{ cm}"),
        ("3", "k = 3"),
        ("0.3", ".3"),
    ],
)
def test_math_equiv_ignores_formatting(gold: str, answer: str) -> None:
    assert math_equiv(answer, [gold]) == 1.0


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("\\frac{1}{2}", "\\frac{1}{3}"),
        ("\\frac{1}{2}", "+1/2"),  # a/b only for integers in their plain form
        ("3", "ab = 3"),  # only a left side of at most two characters is dropped
        ("1=2", "x=1=2"),  # and only before the one "=" of the answer
        ("5", "5 cm"),  # units only after "\text{ "
    ],
)
def test_math_equiv_keeps_what_the_rules_do_not_name(gold: str, answer: str) -> None:
    assert math_equiv(answer, [gold]) == 0.0


def test_an_unreadable_answer_is_compared_as_written() -> None:
    """Two "\\text{ " cannot be read as units: the strings themselves are compared, so only the same text matches."""
    with pytest.raises(UnreadableAnswer):
        normalize_math("5\\text{ m}\\text{ s}")
    assert math_equiv("5\\text{ m}\\text{ s}", ["5\\text{ m}\\text{ s}"]) == 1.0
    assert math_equiv("5\\text{ m}\\text{ s}", ["5"]) == 0.0


def test_math_equiv_matches_an_empty_answer_to_an_empty_reference() -> None:
    """Unlike exact match: the normal forms of "" and a blank reference are both ""."""
    assert normalize_math(" \n ") == ""
    assert math_equiv("", [""]) == 1.0
    assert math_equiv("  ", [" "]) == 1.0


# -- MATH with chain of thought: the last boxed answer --------------------------------------------------------------


def test_boxed_answer_is_the_last_box_with_its_braces_balanced() -> None:
    assert boxed_answer("First $\\boxed{2}$, then $\\boxed{\\frac{1}{2}}$.") == "\\frac{1}{2}"
    assert boxed_answer("$\\boxed{\\frac{1}{2}$") is None  # never closed
    assert boxed_answer("The answer is 5.") is None


def test_an_fbox_is_no_answer_as_in_helm() -> None:
    r"""HELM finds a ``\fbox`` but unwraps only ``\boxed{``: two different framed answers both read as none, and match."""
    assert boxed_answer("\\fbox{5}") is None
    assert math_equiv_chain_of_thought("\\fbox{6}", ["\\fbox{5}"]) == 1.0


def test_math_equiv_chain_of_thought_compares_the_boxed_answers() -> None:
    reference = "We have $x = \\frac{1}{2}$, so the answer is $\\boxed{\\frac{1}{2}}$."
    assert math_equiv_chain_of_thought("Halving gives \\boxed{0.5}", [reference]) == 1.0
    assert math_equiv_chain_of_thought("Halving gives \\boxed{0.25}", [reference]) == 0.0
    assert math_equiv_chain_of_thought("Halving gives 0.5", [reference]) == 0.0  # no box, no answer


def test_the_metrics_take_the_best_correct_reference_and_return_a_named_score() -> None:
    references = [Reference("\\frac{1}{3}", correct=False), Reference("\\frac{1}{2}"), Reference("0.75")]
    score = math_equiv("1/2", references)
    assert isinstance(score, Score) and score.metric == "math_equiv" and score == 1.0
    assert math_equiv("1/3", references) == 0.0  # the matching reference is not a correct one
