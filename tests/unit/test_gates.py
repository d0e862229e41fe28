"""Gate expressions: parsing, rejection of malformed text, and the verdict with its one-line message."""

from __future__ import annotations

import math

import pytest

from pytest_holistic.errors import GateSyntaxError, UserError
from pytest_holistic.gates import Gate, GateResult, Observation, check_metric_name, judge, parse_gate
from pytest_holistic.metrics.stats import Stat
from pytest_holistic.records import RunInfo
from pytest_holistic.report.aggregate import RunResults
from pytest_holistic.report.verdicts import judge_run


def observe(stat: Stat, bounds: tuple[float, float] | None, direction: str = "higher") -> Observation:
    low, high = stat.interval(bounds)
    return Observation(stat.mean, low, high, stat.count, direction)


@pytest.mark.parametrize(
    ("text", "scenario", "metric", "op", "threshold"),
    [
        ("exact_match>=0.6", None, "exact_match", ">=", 0.6),
        ("boolq:quasi_exact_match >= 0.99", "boolq", "quasi_exact_match", ">=", 0.99),
        ("f1_score<0.5", None, "f1_score", "<", 0.5),
        ("x==1", None, "x", "==", 1.0),
        ("exact_match>=1e-1", None, "exact_match", ">=", 0.1),
        ("exact_match > 5E-2", None, "exact_match", ">", 0.05),
        ("exact_match<=.5", None, "exact_match", "<=", 0.5),
        ("  mmlu/abstract_algebra-v1.2 : exact_match  >=  -0.25  ", "mmlu/abstract_algebra-v1.2", "exact_match", ">=", -0.25),
        ("loss<+3", None, "loss", "<", 3.0),
    ],
)
def test_parse_valid_gates(text: str, scenario: str | None, metric: str, op: str, threshold: float) -> None:
    gate = parse_gate(text)
    assert gate == Gate(scenario, metric, op, threshold, "marker")


def test_parse_keeps_the_origin() -> None:
    assert parse_gate("exact_match>=0.6", origin="--holistic-gate").origin == "--holistic-gate"


def test_expression_is_canonical() -> None:
    assert parse_gate("boolq : quasi_exact_match >= 0.99").expression == "boolq:quasi_exact_match>=0.99"
    assert parse_gate("exact_match>=1e-1").expression == "exact_match>=0.1"
    assert parse_gate("x == 1.0").expression == "x==1"


@pytest.mark.parametrize(
    "text",
    [
        "exact_match>>0.6",
        "exact_match",
        ">=0.5",
        "exact_match>=abc",
        "",
        "exact_match=>0.6",
        "exact_match>=0.6%",
        "exact_match>=nan",
        "a:b:exact_match>=0.5",
        "1metric>=0.5",
    ],
)
def test_malformed_gates_name_the_bad_text(text: str) -> None:
    with pytest.raises(GateSyntaxError) as raised:
        parse_gate(text)
    message = str(raised.value)
    assert repr(text) in message
    assert "[scenario:]metric OP number" in message
    assert isinstance(raised.value, UserError)


def test_non_string_gate_is_a_syntax_error() -> None:
    with pytest.raises(GateSyntaxError, match="0.6"):
        parse_gate(0.6)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "value", "holds"),
    [
        ("m>=0.6", 0.6, True),
        ("m>=0.6", 0.59, False),
        ("m>0.6", 0.6, False),
        ("m>0.6", 0.61, True),
        ("m<=0.5", 0.5, True),
        ("m<0.5", 0.5, False),
        ("m==1", 1.0, True),
        ("m==1", 0.999, False),
        ("m>=0", math.nan, False),
        ("m<=1", math.nan, False),
    ],
)
def test_gate_holds(text: str, value: float, holds: bool) -> None:
    assert parse_gate(text).holds(value) is holds


# -- judge ------------------------------------------------------------------------------------------


def _judge(text: str, run: str, scenario: str, observations: dict[str, Observation], origin: str = "marker") -> GateResult:
    gate = parse_gate(text, origin=origin)
    return judge(gate, run, scenario, observations[gate.metric])


STATS = {
    name: observe(stat, (0.0, 1.0))
    for name, stat in {"exact_match": Stat.of([1, 0, 1, 1]), "f1_score": Stat.of([0.5, 0.5])}.items()
}
UNCLIPPED = {"exact_match": observe(Stat.of([1, 0, 1, 1]), None)}


def test_judge_pass() -> None:
    result = _judge("exact_match>=0.6", "run-key", "boolq", STATS)
    # mean = 3/4; interval 0.75 -/+ 1.959964 * 0.25 -> (0.2600, 1.2400) clipped to (0.2600, 1.0)
    assert result.passed is True
    assert result.observed == 0.75
    assert result.n == 4
    assert result.run == "run-key"
    assert result.scenario == "boolq"
    assert result.interval[0] == pytest.approx(0.260009, abs=1e-6)
    assert result.interval[1] == 1.0
    message = result.message
    for part in ("boolq", "exact_match", "0.7500", "n=4", ">= 0.6", "meets", "0.2600", "1.0000"):
        assert part in message, part
    assert "does not meet" not in message
    assert "\n" not in message


def test_judge_fail() -> None:
    result = _judge("boolq:exact_match>=0.8", "run-key", "boolq", STATS)
    assert result.passed is False
    assert result.observed == 0.75
    message = result.message
    for part in ("boolq", "exact_match", "0.7500", "n=4", "does not meet", ">= 0.8"):
        assert part in message, part


def test_judge_upper_threshold() -> None:
    # f1 mean = (0.5 + 0.5) / 2 = 0.5 -> "< 0.5" fails, "<= 0.5" passes
    assert _judge("f1_score<0.5", "r", "qa", STATS).passed is False
    assert _judge("f1_score<=0.5", "r", "qa", STATS).passed is True


def _unrecorded(gate: str, observations: dict[str, Observation]) -> GateResult:
    """A gate against a run (with no perturbations) that did not record its metric: decided in report.verdicts."""
    info = RunInfo("run-key", "boolq", "test_boolq", "local", {}, {}, (), ("exact_match",), ())
    return judge_run(parse_gate(gate), RunResults(info), observations)


def test_judge_unrecorded_metric_fails_naming_the_recorded_ones() -> None:
    result = _unrecorded("quasi_exact_match>=0.5", STATS)
    assert result.passed is False
    assert math.isnan(result.observed)
    assert result.n == 0
    message = result.message
    assert "'quasi_exact_match'" in message
    assert "not recorded" in message
    assert "recorded: exact_match, f1_score" in message
    assert "boolq" in message


def test_judge_with_nothing_recorded() -> None:
    result = _unrecorded("exact_match>=0.5", {})
    assert result.passed is False
    assert "recorded: none" in result.message


def test_an_unrecorded_robustness_number_names_the_option_that_adds_its_variants() -> None:
    assert _unrecorded("robustness.exact_match>=0.5", STATS).message.endswith(
        "add --holistic-perturb robustness or perturbations=('robustness',) to its marker"
    )
    assert "--holistic-perturb equivariance" in _unrecorded("contrast_sets.exact_match>=0.5", STATS).message


def test_judge_without_bounds_does_not_clip() -> None:
    # 0.75 + 0.489991 = 1.239991 stays unclipped
    result = _judge("exact_match>=0.6", "r", "boolq", UNCLIPPED)
    assert result.interval[1] == pytest.approx(1.239991, abs=1e-6)


def test_gate_result_to_dict() -> None:
    record = _judge("boolq:exact_match>=0.6", "r", "boolq", STATS, origin="cli").to_dict()
    assert record["gate"] == "boolq:exact_match>=0.6"
    assert record["origin"] == "cli"
    assert record["metric"] == "exact_match"
    assert record["op"] == ">="
    assert record["threshold"] == 0.6
    assert record["observed"] == 0.75
    assert record["n"] == 4
    assert record["passed"] is True
    assert isinstance(record["ci95"], list) and len(record["ci95"]) == 2


# -- bounds, direction and optimum ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "metric", "bound", "target"),
    [
        ("exact_match.lower>=0.6", "exact_match", "lower", None),
        ("ece.upper<=0.1", "ece", "upper", None),
        ("robustness.exact_match.worst>=0.5", "robustness.exact_match", "worst", None),
        ("robustness.exact_match>=0.5", "robustness.exact_match", "mean", None),
        ("abs(stereotyping.is_biased - 0.5) <= 0.1", "stereotyping.is_biased", "mean", 0.5),
        ("crows:abs(is_biased.worst-0.5)<=0.2", "is_biased", "worst", 0.5),
    ],
)
def test_parse_bounds_and_optimum(text: str, metric: str, bound: str, target: float | None) -> None:
    gate = parse_gate(text)
    assert (gate.metric, gate.bound, gate.target) == (metric, bound, target)
    assert parse_gate(gate.expression) == gate


def test_lower_bound_gate() -> None:
    # exact_match: mean 0.75, interval (0.2600, 1.0): the mean meets 0.6, the lower bound does not.
    assert _judge("exact_match>=0.6", "r", "s", STATS).passed
    result = _judge("exact_match.lower>=0.6", "r", "s", STATS)
    assert not result.passed
    assert "exact_match.lower = 0.2600 does not meet >= 0.6" in result.message


def test_worst_bound_follows_the_direction() -> None:
    ece = {"ece": Observation(0.05, 0.02, 0.12, 300, "lower")}
    # lower is better: the worst end is the upper bound 0.12
    assert not _judge("ece.worst<=0.1", "r", "s", ece).passed
    assert _judge("ece<=0.1", "r", "s", ece).passed
    assert "lower is better" in _judge("ece<=0.1", "r", "s", ece).message
    accuracy = {"acc": Observation(0.7, 0.62, 0.78, 300, "higher")}
    assert _judge("acc.worst>=0.6", "r", "s", accuracy).passed
    assert not _judge("acc.worst>=0.65", "r", "s", accuracy).passed


def test_optimum_gate() -> None:
    biased = {"is_biased": Observation(0.56, 0.48, 0.64, 200, "target", 0.5)}
    # |0.56 - 0.5| = 0.06 <= 0.1; worst end: max(|0.48-0.5|, |0.64-0.5|) = 0.14 > 0.1
    assert _judge("abs(is_biased-0.5)<=0.1", "r", "s", biased).passed
    result = _judge("abs(is_biased.worst-0.5)<=0.1", "r", "s", biased)
    assert not result.passed
    assert "= 0.1400 does not meet <= 0.1" in result.message


# -- refused before any model work ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("exact_match>=1e999", "gate 'exact_match>=1e999': threshold 1e999 is beyond the float range (it reads as infinity)"),
        ("exact_match<=-1e400", "gate 'exact_match<=-1e400': threshold -1e400 is beyond the float range"),
        ("abs(is_biased - 1e999) <= 0.1", "gate 'abs(is_biased - 1e999) <= 0.1': optimum 1e999 is beyond the float range"),
        ("exact_match.lower.upper>=0.5", "two bounds ('lower', 'upper') after 'exact_match'; write one, e.g. 'exact_match.upper"),
        ("my_score.worst.mean>=0.5", "two bounds ('worst', 'mean') after 'my_score'; write one"),
    ],
)
def test_parse_refuses_infinite_numbers_and_two_bounds(text: str, problem: str) -> None:
    with pytest.raises(GateSyntaxError) as raised:
        parse_gate(text)
    assert problem in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_finite_threshold_near_the_float_limit_is_kept() -> None:
    assert parse_gate("exact_match<=1e308").threshold == 1e308


KNOWN = ("exact_match", "quasi_exact_match", "runtime_s")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("EXACT_MATCH>=0.5", "'EXACT_MATCH>=0.5' (from the command line): no metric 'EXACT_MATCH'; did you mean 'exact_match'?"),
        ("Runtime_S.upper<=3", "no metric 'Runtime_S'; did you mean 'runtime_s'? (metric names are case-sensitive)"),
        ("exact_mach>=0.5", "no metric 'exact_mach'; did you mean 'exact_match'?"),
        ("exact_match.upr>=0.5", "unknown bound 'upr' after metric 'exact_match'; did you mean 'exact_match.upper'?"),
        ("exact_match.LOWER>=0.5", "unknown bound 'LOWER' after metric 'exact_match'; did you mean 'exact_match.lower'?"),
        ("exact_match.lower.foo>=0.5", "unknown bound 'lower.foo' after metric 'exact_match'; write at most one of .mean,"),
        ("exact_match.v2>=0.5", "unknown bound 'v2' after metric 'exact_match'"),
        (
            "fairness.exact_match.lowr>=0.5",
            "unknown bound 'lowr' after metric 'fairness.exact_match'; did you mean 'fairness.exact_match.lower'?",
        ),
        ("typos.before.exact_match.uper>=0.5", "did you mean 'typos.before.exact_match.upper'?"),
        ("robustness.exact_mach>=0.5", "no metric 'exact_mach'; did you mean 'robustness.exact_match'?"),
    ],
)
def test_check_metric_name_refuses_case_and_bound_mistakes(text: str, problem: str) -> None:
    with pytest.raises(GateSyntaxError) as raised:
        check_metric_name(parse_gate(text, "command line"), KNOWN, "from the command line")
    assert problem in str(raised.value)


@pytest.mark.parametrize("text", ["exact_match>=0.5", "exact_match.worst>=0.5", "my_score>=0.5", "my.score.lower>=1", "ro.em>1"])
def test_check_metric_name_accepts_known_and_recorded_names(text: str) -> None:
    check_metric_name(parse_gate(text), KNOWN, "marker")
