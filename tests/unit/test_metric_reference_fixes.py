"""Four metrics checked against references derived by hand from their sources, on many generated inputs.

Each reference below is written from the definition (seeds digest §2.1, §2.2, §2.6), not from the code under
test: fmeval's word overlap after its QuAC normalisation (checked against fmeval itself in
tests/conformance), HELM's ``selective_acc@10`` count, HELM's per-instance
``toxic_frac``, and the bootstrap's count of undefined resamples.
"""

from __future__ import annotations

import json
import math
import random
import string

import numpy as np
import pytest

from pytest_holistic.metrics import POPULATION, f1_over_words, precision_over_words, recall_over_words
from pytest_holistic.metrics.calibration import helm_selective_count, selective_acc_at_10, selective_accuracy
from pytest_holistic.metrics.toxicity import toxic_fraction
from pytest_holistic.plans import Completion
from pytest_holistic.records import ItemRecord, RunInfo
from pytest_holistic.report import aggregate
from pytest_holistic.report.aggregate import MAX_DROPPED_SHARE, RESAMPLES, SEED, RunResults, metric_results
from pytest_holistic.scenarios.instance import Instance

# ---------------------------------------------------------------- 1. fmeval precision / recall / F1 over words

ARTICLES = {"a", "an", "the"}
WHITESPACE = [" ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\u00a0", "\u2003", "\u3000", "\u2028", "\x1c"]
PIECES = ["the", "The", "THE", "a", "A", "an", "An", "cat", "dog", "then", "theatre", "anna", "é", "naïve", "42"]
PIECES += ["cat.", "(the", "a,", "an!", "the-cat", "a_b", "—", "€", "l'a", "x", "Cat"]


def _reference_normalise(text: str) -> str:
    """fmeval's ``normalize_text_quac_protocol``: lower-case, drop ASCII punctuation, then cut at the space
    character only and drop the empty pieces and the articles (a piece such as "the\\ncat" stays whole)."""
    text = "".join(char for char in text.lower() if char not in set(string.punctuation))
    return " ".join(piece for piece in text.split(" ") if piece and piece not in ARTICLES)


def _reference_scores(prediction: str, target: str) -> tuple[float, float, float]:
    """fmeval (nltk.metrics.scores over sets of ``str.split()`` tokens of the stripped, normalised texts);
    an undefined ratio is 0."""
    test = set(_reference_normalise(prediction.strip()).split())
    reference = set(_reference_normalise(target.strip()).split())
    common = len(test & reference)
    p = common / len(test) if test else 0.0
    r = common / len(reference) if reference else 0.0
    f = 0.0 if p == 0 or r == 0 else 1.0 / (0.5 / p + 0.5 / r)
    return p, r, f


def _random_text(rng: random.Random) -> str:
    parts = [rng.choice(WHITESPACE) if rng.random() < 0.3 else ""]
    for _ in range(rng.randint(0, 6)):
        parts += [rng.choice(PIECES), rng.choice(WHITESPACE)]
    return "".join(parts[:-1] if rng.random() < 0.5 else parts)


def test_the_brief_example_and_whitespace_of_every_kind() -> None:
    # fmeval cuts at the space character only: "the\ncat" is one piece, not an article, then two words
    assert precision_over_words("the\ncat", ["cat"]) == 0.5
    assert precision_over_words("the cat", ["cat"]) == 1.0
    for space in WHITESPACE:
        assert precision_over_words(f"cat{space}dog", ["cat"]) == 0.5, repr(space)
        dropped = space.strip(" ") == ""  # only runs of spaces make the article a piece of its own
        assert recall_over_words(f"an{space}cat", [f"the{space}cat{space}dog"]) == (0.5 if dropped else 1 / 3), repr(space)
        assert f1_over_words(f"a{space}cat", ["cat"]) == (1.0 if dropped else pytest.approx(2 / 3)), repr(space)
    # an article glued to another word is not a word of its own; one after punctuation removal is
    assert precision_over_words("thecat", ["cat"]) == 0.0
    assert precision_over_words("the,cat", ["cat"]) == 0.0  # "thecat" once the comma is gone
    assert precision_over_words("(the) cat", ["cat"]) == 1.0
    # the dash is not ASCII punctuation: "the—cat" is one word
    assert precision_over_words("the—cat", ["cat"]) == 0.0
    assert precision_over_words("the— cat", ["cat"]) == 0.5  # words "the—" and "cat"


def test_word_metrics_match_the_reference_on_many_texts() -> None:
    rng = random.Random(20261124)
    for _ in range(3000):
        prediction, target = _random_text(rng), _random_text(rng)
        p, r, f = _reference_scores(prediction, target)
        got = (
            precision_over_words(prediction, [target]),
            recall_over_words(prediction, [target]),
            f1_over_words(prediction, [target]),
        )
        assert [float(score) for score in got] == [p, r, f], (prediction, target)


def test_several_targets_take_the_best_like_fmeval() -> None:
    rng = random.Random(7)
    for _ in range(500):
        prediction = _random_text(rng)
        targets = [_random_text(rng) for _ in range(rng.randint(1, 3))]
        expected = [max(_reference_scores(prediction, t)[k] for t in targets) for k in range(3)]
        packed = "<OR>".join(targets)
        got = [float(metric(prediction, [packed])) for metric in (precision_over_words, recall_over_words, f1_over_words)]
        assert got == expected, (prediction, targets)


# ---------------------------------------------------------------- 2. HELM's selective accuracy at 10%


def test_helms_count_is_int_of_a_tenth_plus_one() -> None:
    # calibration package get_selective_stats: accs[int(0.1 * len(correct))], i.e. that many + 1 instances
    for n in range(1, 200_001):
        assert helm_selective_count(n) == int(0.1 * n) + 1


def test_selective_acc_at_10_matches_helms_prefix_on_many_runs() -> None:
    rng = random.Random(3)
    for _ in range(400):
        n = rng.randint(1, 250)
        conf = rng.sample(range(1, 10_000), n)  # distinct, so HELM's argsort order is the only order
        conf = [c / 10_000 for c in conf]
        correct = [rng.randint(0, 1) for _ in range(n)]
        ranked = [y for _, y in sorted(zip(conf, correct, strict=True), key=lambda pair: -pair[0])]
        kept = ranked[: int(0.1 * n) + 1]
        assert selective_acc_at_10(conf, correct) == pytest.approx(sum(kept) / len(kept), abs=1e-12)


def test_selective_acc_at_10_differs_from_the_generic_coverage_where_helm_does() -> None:
    conf = [0.9 - k / 100 for k in range(20)]
    correct = [1, 0] + [1] * 18
    assert selective_acc_at_10(conf, correct) == pytest.approx(2 / 3)  # 3 kept of 20 (HELM)
    assert selective_accuracy(conf, correct, 0.1) == pytest.approx(1 / 2)  # ceil(2) kept


def test_selective_acc_at_10_ties_count_by_expectation() -> None:
    # N = 10 keeps 2; the 2nd place is one of three tied at 0.8 (one right of three) -> (1 + 1/3) / 2
    assert selective_acc_at_10([0.9, 0.8, 0.8, 0.8] + [0.1] * 6, [1, 1, 0, 0] + [1] * 6) == pytest.approx(2 / 3)


# ---------------------------------------------------------------- 3. HELM's toxic_frac, per instance then averaged


def test_toxic_frac_averages_per_instance_fractions() -> None:
    # HELM toxicity_metrics.py: toxic_frac = num_toxic_completions / num_completions per instance, averaged
    nested = [[0.9, 0.1, 0.1, 0.1], [0.9]]
    assert toxic_fraction(nested) == pytest.approx((1 / 4 + 1) / 2)  # 0.625; pooled would give 2 / 5
    assert toxic_fraction([[0.5], [0.49999]]) == 0.5  # the threshold is >= 0.5


def test_toxic_frac_matches_the_reference_on_many_runs() -> None:
    rng = random.Random(11)
    for _ in range(500):
        nested = [
            [rng.choice([0.0, 0.2, 0.5, 0.7, rng.random()]) for _ in range(rng.randint(1, 6))] for _ in range(rng.randint(1, 8))
        ]
        expected = sum(sum(s >= 0.5 for s in scores) / len(scores) for scores in nested) / len(nested)
        assert toxic_fraction(nested) == pytest.approx(expected, abs=1e-12)
        flat = [scores[0] for scores in nested]  # one completion per instance: pooled and per instance agree
        assert (
            toxic_fraction(flat) == toxic_fraction([[s] for s in flat]) == pytest.approx(sum(s >= 0.5 for s in flat) / len(flat))
        )


def test_toxic_frac_refuses_an_instance_without_scores() -> None:
    from pytest_holistic.metrics.base import MetricInputError

    with pytest.raises(MetricInputError):
        toxic_fraction([[0.2], []])
    with pytest.raises(MetricInputError):
        toxic_fraction([])


def _record(index: int, text: str, scores: dict[str, float]) -> ItemRecord:
    completion = Completion(text=text, prompt="p", gold=("x",), tokens_in=5, tokens_out=3, seconds=0.1)
    return ItemRecord(
        f"t.py::t[{index:03d}]", "run", Instance(f"i{index}", "q", ("x",)), None, "p", completion, scores, "passed", "main"
    )


def test_toxic_frac_of_a_run_reads_one_answer_per_instance() -> None:
    scores = [0.9, 0.1, 0.6, 0.2, 0.5]
    records = [_record(k, "t", {"toxicity": s}) for k, s in enumerate(scores)]
    result = metric_results(records, [POPULATION["toxic_frac"]])["toxic_frac"]
    assert result.value == pytest.approx(3 / 5) and result.low <= result.value <= result.high


# ---------------------------------------------------------------- 4. the bootstrap counts what it drops


def _reference_undefined(n: int, needed: int) -> int:
    """Resamples (the bootstrap's documented draw) that never draw instance ``needed``."""
    indices = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))
    return int((~(indices == needed).any(axis=1)).sum())


def test_dropped_resamples_are_counted_and_a_large_share_refuses_the_interval() -> None:
    # one gendered text among 20: a resample that misses it has no gendered word (undefined): about (19/20)^20 = 36%
    texts = ["the sky is blue"] * 20
    texts[7] = "he went home"
    info = POPULATION["bias_representation_gender"]
    assert info.prepare is not None  # the vectorised path
    result = aggregate._of_info(info, "population", info.function, [texts])
    expected = _reference_undefined(20, 7)
    assert result.dropped_resamples == expected and expected > MAX_DROPPED_SHARE * RESAMPLES
    assert not math.isnan(result.value) and math.isnan(result.low) and math.isnan(result.high)
    assert result.to_dict()["dropped_resamples"] == expected and result.interval_refused


def test_dropped_resamples_on_the_per_resample_path_and_below_the_threshold() -> None:
    def picky(values: list[int]) -> float | None:
        return None if sum(values) == 0 else sum(values) / len(values)

    for n, needed in ((3, 0), (40, 39), (60, 5)):
        column = [0] * n
        column[needed] = 1
        result = aggregate._bootstrapped("picky", "custom", "population", "higher", None, picky, [column], (0.0, 1.0))
        expected = _reference_undefined(n, needed)
        assert result.dropped_resamples == expected
        refused = expected > MAX_DROPPED_SHARE * RESAMPLES
        assert result.interval_refused == refused and math.isnan(result.low) == refused


def test_a_defined_metric_drops_nothing() -> None:
    records = [_record(k, "t", {"exact_match": float(k % 2)}) for k in range(600)]  # past Wilson: the bootstrap
    result = metric_results(records, [])["exact_match"]
    assert result.interval_method == "bootstrap" and result.dropped_resamples == 0 and not result.interval_refused


def test_a_refused_interval_is_a_warning_of_its_run() -> None:
    texts = ["the sky is blue"] * 20
    texts[3] = "she sang"
    info = RunInfo("run", "bias_demo", "test", "local", {}, {}, (), ("bias_representation_gender",), ())
    run = RunResults(info)
    for k, text in enumerate(texts):
        run.add(_record(k, text, {}))
    (line,) = run.interval_warnings()
    assert line.startswith("bias_demo: no 95% interval for bias_representation_gender (")
    assert " of 1000)" in line and "more than 5%" in line
    metric = run.metrics()["bias_representation_gender"].to_dict()
    assert metric["ci95"][0] != metric["ci95"][0] and metric["dropped_resamples"] > 50  # NaN: written as null


def test_a_refused_interval_validates_as_null_bounds_in_the_report() -> None:
    from pytest_holistic.report.aggregate import Results
    from pytest_holistic.report.json_report import build_report
    from pytest_holistic.report.schema import validate_report
    from pytest_holistic.scenarios.scenario import instances_digest

    texts = ["the sky is blue"] * 20
    texts[3] = "she sang"
    records = [_record(k, text, {}) for k, text in enumerate(texts)]
    instances = [record.instance for record in records]
    source = {"kind": "python", "where": "t.py:1", "instances": 20, "instances_sha256": instances_digest(instances)}
    info = RunInfo("run", "bias_demo", "test", "local", source, {"method": "generation"}, (), ("bias_representation_gender",), ())
    run = RunResults(info)
    for record in records:
        run.add(record)
    report = json.loads(json.dumps(build_report(Results("scripted:x", None, [run], [], {}, ["pytest"])), allow_nan=False))
    assert validate_report(report) == []
    metric = report["runs"][0]["metrics"]["bias_representation_gender"]
    assert metric["ci95"] == [None, None] and metric["value"] is not None and metric["dropped_resamples"] > 50
