"""The bootstrap's prepared (vectorised) metrics give the numbers of the per-resample path they replace.

Oracles: the bias metrics as they were written before (a ``Counter`` per text, recounted in every resample),
the calibration functions called once per resample, and scikit-learn's ``LogisticRegression(C=1e10)`` for
Platt scaling, both as HELM calls it (default tolerance) and run to convergence.
"""

from __future__ import annotations

import math
import random
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_holistic.metrics import POPULATION
from pytest_holistic.metrics.bias import _bias_rows, demographic_groups, group_counts_to_bias, target_words, word_list
from pytest_holistic.metrics.calibration import PLATT_C, PLATT_EPSILON, ece, fit_platt, platt_scaling
from pytest_holistic.metrics.stats import bootstrap_interval, resample_weights
from pytest_holistic.metrics.tokenize import word_tokenize
from tests.plugin.suites import capitals

# -- the bias metrics as they were: recount every text's tokens on every call ---------------------------


def _old_token_counts(texts: Iterable[str]) -> list[Counter[str]]:
    return [Counter(word_tokenize(text.lower())) for text in texts if text]


def _old_group_count(counts: Counter[str], words: Sequence[str]) -> int:
    return sum(counts[word] for word in words)


def old_representation(
    texts: Iterable[str], category: str = "gender", groups: Mapping[str, Sequence[str]] | None = None
) -> float | None:
    chosen = demographic_groups(category) if groups is None else {name: tuple(words) for name, words in groups.items()}  # type: ignore[arg-type]
    per_text = _old_token_counts(texts)
    counts = [sum(_old_group_count(counter, words) for counter in per_text) for words in chosen.values()]
    return group_counts_to_bias(counts, [len(words) for words in chosen.values()])


def old_associations(
    texts: Iterable[str],
    category: str = "gender",
    target: str = "profession",
    groups: Mapping[str, Sequence[str]] | None = None,
    targets: Sequence[str] | None = None,
) -> float | None:
    chosen = demographic_groups(category) if groups is None else {name: tuple(words) for name, words in groups.items()}  # type: ignore[arg-type]
    words = tuple(dict.fromkeys(target_words(target) if targets is None else targets))  # type: ignore[arg-type]
    sizes = [len(group_words) for group_words in chosen.values()]
    co_occurrence: dict[str, list[int]] = {word: [0] * len(chosen) for word in words}
    for counter in _old_token_counts(texts):
        group_counts = [_old_group_count(counter, group_words) for group_words in chosen.values()]
        if not any(group_counts):
            continue
        for word in words:
            if counter[word]:
                row = co_occurrence[word]
                for index, count in enumerate(group_counts):
                    row[index] += counter[word] * count
    scores = [score for row in co_occurrence.values() if (score := group_counts_to_bias(row, sizes)) is not None]
    return sum(scores) / len(scores) if scores else None


def bias_texts(seed: int, count: int = 24) -> list[str]:
    """Generations that mention gendered and racial words, professions and adjectives, with case, punctuation and blanks."""
    rng = random.Random(seed)
    pools = [
        word_list("female")[:12],
        word_list("male")[:12],
        word_list("asian")[:6],
        word_list("hispanic")[:6],
        word_list("white")[:6],
        word_list("professions")[:15],
        word_list("adjectives")[:15],
        ("the", "a", "was", "and", "went", "home", "very", "it's", "Mr.", "(really)"),
    ]
    texts = []
    for _ in range(count):
        if rng.random() < 0.1:
            texts.append("")
            continue
        words = [rng.choice(rng.choice(pools)) for _ in range(rng.randint(3, 14))]
        words = [word.capitalize() if rng.random() < 0.2 else word for word in words]
        texts.append(" ".join(words) + rng.choice([".", "!", "? And more.", ""]))
    return texts


def none_as_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def same(a: float, b: float) -> bool:
    """Bit-for-bit equal, NaN equal to NaN."""
    return (math.isnan(a) and math.isnan(b)) or a == b


BIAS_METRICS = [
    ("bias_representation_gender", lambda texts: old_representation(texts, "gender")),
    ("bias_representation_race", lambda texts: old_representation(texts, "race")),
    ("bias_associations_gender_profession", lambda texts: old_associations(texts, "gender", "profession")),
    ("bias_associations_gender_adjective", lambda texts: old_associations(texts, "gender", "adjective")),
    ("bias_associations_race_profession", lambda texts: old_associations(texts, "race", "profession")),
    ("bias_associations_race_adjective", lambda texts: old_associations(texts, "race", "adjective")),
]


def test_resample_weights_count_each_draw() -> None:
    indices = np.random.default_rng(1).integers(0, 7, size=(50, 7))
    weights = resample_weights(indices, 7)
    assert weights.shape == (50, 7)
    for row, drawn in zip(weights, indices, strict=True):
        assert row.tolist() == np.bincount(drawn, minlength=7).tolist()


def test_vectorised_group_bias_is_bit_for_bit_the_scalar_one() -> None:
    rng = np.random.default_rng(2)
    for sizes in ([3, 5], [7, 11, 13], [1, 1]):
        counts = rng.integers(0, 40, size=(400, len(sizes))) * (rng.random((400, len(sizes))) < 0.7)
        counts[:5] = 0  # all zero: undefined
        vectorised = _bias_rows(counts.astype(float), sizes)
        for row, value in zip(counts, vectorised, strict=True):
            assert same(float(value), none_as_nan(group_counts_to_bias(row.tolist(), sizes)))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("name", "old"), BIAS_METRICS, ids=[name for name, _ in BIAS_METRICS])
def test_bias_metric_equals_the_recounting_implementation(name: str, old: Callable[[list[str]], float | None], seed: int) -> None:
    info = POPULATION[name]
    texts = bias_texts(seed)
    assert same(none_as_nan(info.function(texts)), none_as_nan(old(texts)))
    # every resample, through the prepared counts, equals a recount of the resampled texts
    indices = np.random.default_rng(seed).integers(0, len(texts), size=(40, len(texts)))
    assert info.prepare is not None
    prepared = info.prepare(texts)(indices)
    for row, value in zip(indices, prepared, strict=True):
        assert same(float(value), none_as_nan(old([texts[k] for k in row])))


def test_bias_with_custom_lists_and_no_mentions_matches_the_old_code() -> None:
    texts = ["The nurse and the doctor met her.", "He is a doctor, she is a doctor.", "", "Nobody here."]
    groups = {"f": ["her", "she", "her"], "m": ["he", "him"]}  # a word listed twice counts twice
    targets = ["doctor", "nurse", "doctor", "pilot"]
    from pytest_holistic.metrics.bias import demographic_representation, stereotypical_associations

    assert demographic_representation(texts, groups=groups) == old_representation(texts, groups=groups)
    new = stereotypical_associations(texts, groups=groups, targets=targets)
    assert new == old_associations(texts, groups=groups, targets=targets)
    assert demographic_representation(["Nobody here.", ""]) is None and old_representation(["Nobody here.", ""]) is None
    assert stereotypical_associations([]) is None and old_associations([]) is None


@pytest.mark.parametrize(("name", "old"), BIAS_METRICS[:3], ids=[name for name, _ in BIAS_METRICS[:3]])
def test_bias_bootstrap_interval_is_identical_to_the_recounting_one(name: str, old: Callable[[list[str]], float | None]) -> None:
    info = POPULATION[name]
    texts = bias_texts(7, count=30)
    before = bootstrap_interval(old, texts, resamples=150, seed=0, bounds=info.bounds)
    after = bootstrap_interval(info.function, texts, resamples=150, seed=0, bounds=info.bounds, prepare=info.prepare)
    assert same(before.estimate, after.estimate) and same(before.low, after.low) and same(before.high, after.high)


# -- calibration metrics: validated once, the same arithmetic per resample --------------------------------


def calibration_data(seed: int, n: int = 60) -> tuple[list[float], list[bool]]:
    rng = random.Random(seed)
    conf = [round(rng.uniform(0.25, 0.95), 3) for _ in range(n)]
    return conf, [rng.random() < c * 0.8 for c in conf]


@pytest.mark.parametrize(
    "name", ["ece_10_bin", "ece_1_bin", "selective_acc_at_10", "selective_cov_acc_area", "platt_ece_10_bin", "platt_ece_1_bin"]
)
def test_prepared_calibration_metric_equals_calling_it_on_each_resample(name: str) -> None:
    info = POPULATION[name]
    conf, correct = calibration_data(3)
    plain = bootstrap_interval(info.function, conf, correct, resamples=200, seed=5, bounds=info.bounds)
    prepared = bootstrap_interval(info.function, conf, correct, resamples=200, seed=5, bounds=info.bounds, prepare=info.prepare)
    assert prepared.estimate == plain.estimate
    if name.startswith("platt"):  # a weighted fit versus a fit of repeated rows: the same minimiser, rounded differently
        assert (prepared.low, prepared.high) == (pytest.approx(plain.low, abs=1e-12), pytest.approx(plain.high, abs=1e-12))
    else:  # the very same arithmetic on the very same arrays
        assert (prepared.low, prepared.high) == (plain.low, plain.high)


def test_invalid_columns_fall_back_to_deciding_resample_by_resample() -> None:
    info = POPULATION["ece_10_bin"]
    conf, correct = calibration_data(4, n=40)
    conf[3] = math.nan  # the estimate is undefined, but resamples that never draw instance 3 are not
    plain = bootstrap_interval(info.function, conf, correct, resamples=100)
    prepared = bootstrap_interval(info.function, conf, correct, resamples=100, prepare=info.prepare)
    assert math.isnan(prepared.estimate)
    assert (prepared.low, prepared.high) == (plain.low, plain.high) and not math.isnan(prepared.low)


# -- Platt scaling against scikit-learn ----------------------------------------------------------------


def features(conf: Sequence[float]) -> np.ndarray:
    clipped = np.clip(np.asarray(conf, dtype=float), PLATT_EPSILON, 1 - PLATT_EPSILON)
    return np.log(clipped / (1 - clipped))


def sklearn_fit(x: np.ndarray, y: np.ndarray, **options: Any) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # separable data: lbfgs warns that it stopped at max_iter
        model = LogisticRegression(C=PLATT_C, **options).fit(x.reshape(-1, 1), y.astype(int))
    return float(model.coef_[0][0]), float(model.intercept_[0])


LBFGS_CONVERGED = {"solver": "lbfgs", "tol": 1e-12, "max_iter": 100_000}  # HELM's solver, run until it cannot improve
CONVERGED = {"solver": "newton-cholesky", "tol": 1e-12, "max_iter": 1000}  # the same model, solved as exactly, faster


def probabilities(x: np.ndarray, coef: float, intercept: float) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -(coef * x + intercept)))


def objective(x: np.ndarray, y: np.ndarray, coef: float, intercept: float) -> float:
    """scikit-learn's penalised log-loss, times n: what both fits minimise."""
    z = coef * x + intercept
    return float(np.logaddexp(0.0, np.where(y == 1, -z, z)).sum() + coef**2 / (2 * PLATT_C))


def datasets() -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(11)
    out = []
    for k, n in enumerate((8, 30, 60, 200)):  # overconfident, noisy, tied confidences
        conf = np.round(rng.uniform(0.05, 0.99, n), 2 if k % 2 else 6)
        out.append((f"random-{n}", conf, (rng.random(n) < 0.3 + 0.5 * conf).astype(float)))
    conf = rng.uniform(0.3, 0.9, 40)
    out.append(("separable", conf, (conf > 0.6).astype(float)))
    out.append(("separable-reversed", conf, (conf < 0.45).astype(float)))
    out.append(("two-points", np.array([0.2, 0.8]), np.array([0.0, 1.0])))
    out.append(("constant-scores", np.full(25, 0.7), (np.arange(25) % 3 == 0).astype(float)))
    out.append(("saturated-scores", np.array([0.0, 1.0, 1.0, 0.0, 1.0, 1e-15]), np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])))
    return out


@pytest.mark.parametrize(("label", "conf", "hits"), datasets(), ids=[label for label, _, _ in datasets()])
def test_platt_fit_matches_sklearn_run_to_convergence(label: str, conf: np.ndarray, hits: np.ndarray) -> None:
    x = features(conf)
    scaler = platt_scaling(conf.tolist(), hits.tolist())
    assert scaler is not None
    ours = probabilities(x, scaler.coef, scaler.intercept)
    for options in (LBFGS_CONVERGED, CONVERGED):
        theirs = probabilities(x, *sklearn_fit(x, hits, **options))
        assert np.max(np.abs(ours - theirs)) <= 1e-6, options
    assert ece(scaler(conf.tolist()), hits.tolist()) == pytest.approx(ece(theirs.tolist(), hits.tolist()), abs=1e-6)
    # against HELM's own call (default tolerance 1e-4) ours is never the worse minimiser of the shared objective
    default = sklearn_fit(x, hits)
    assert objective(x, hits, scaler.coef, scaler.intercept) <= objective(x, hits, *default) + 1e-9
    if not label.startswith("separable"):  # there lbfgs stops anywhere along the diverging slope
        assert np.max(np.abs(ours - probabilities(x, *default))) <= 2e-3


def test_platt_fit_of_constant_scores_is_the_base_rate_and_one_class_has_nothing_to_fit() -> None:
    scaler = platt_scaling([0.7] * 10, [1, 0, 0, 1, 0, 0, 0, 0, 0, 1])
    assert scaler is not None and scaler.coef == 0.0
    assert scaler([0.7, 0.1]) == pytest.approx([0.3, 0.3], abs=1e-12)
    x = features([0.7] * 10)
    assert probabilities(x, *sklearn_fit(x, np.array([1, 0, 0, 1, 0, 0, 0, 0, 0, 1.0]), **CONVERGED)) == pytest.approx(
        [0.3] * 10, abs=1e-6
    )
    assert platt_scaling([0.2, 0.9, 0.4], [1, 1, 1]) is None
    with pytest.raises(ValueError, match="class"):  # scikit-learn refuses it too
        sklearn_fit(features([0.2, 0.9, 0.4]), np.array([1.0, 1.0, 1.0]))


def test_weighted_rows_fit_each_resample_like_sklearn_on_the_repeated_data() -> None:
    conf, correct = calibration_data(8, n=50)
    x, y = features(conf), np.asarray(correct, dtype=float)
    indices = np.random.default_rng(8).integers(0, 50, size=(25, 50))
    weights = resample_weights(indices, 50)
    keep = [(0 < w @ y < 50) for w in weights]
    coefs, intercepts = fit_platt(x, y, weights[keep])
    for row, coef, intercept in zip(indices[keep], coefs, intercepts, strict=True):
        theirs = probabilities(x[row], *sklearn_fit(x[row], y[row], **CONVERGED))
        assert np.max(np.abs(probabilities(x[row], coef, intercept) - theirs)) <= 1e-6


def old_platt_ece_10_bin(options: Mapping[str, Any]) -> Callable[[list[float], list[bool]], float]:
    """The previous platt_ece_10_bin: a scikit-learn fit on every call (``options`` as given to LogisticRegression)."""

    def metric(confidences: list[float], correct: list[bool]) -> float:
        hits = np.asarray(correct, dtype=float)
        if hits.min() == hits.max():
            return 0.0
        x = features(confidences)
        return ece(probabilities(x, *sklearn_fit(x, hits, **options)).tolist(), correct, 10)

    return metric


def test_platt_ece_bootstrap_interval_matches_the_sklearn_implementation() -> None:
    # MMLU-shaped: 60 four-way answers, confidence 0.25-0.6, right about 60% as often as claimed
    rng = random.Random(6)
    conf = [round(rng.uniform(0.25, 0.6), 3) for _ in range(60)]
    correct = [rng.random() < c * 0.6 for c in conf]
    info = POPULATION["platt_ece_10_bin"]
    new = bootstrap_interval(info.function, conf, correct, resamples=200, bounds=info.bounds, prepare=info.prepare)
    converged = bootstrap_interval(old_platt_ece_10_bin(CONVERGED), conf, correct, resamples=200, bounds=info.bounds)
    for ours, theirs in ((new.estimate, converged.estimate), (new.low, converged.low), (new.high, converged.high)):
        assert ours == pytest.approx(theirs, abs=1e-9)
    # HELM's call stops lbfgs at a gradient of 1e-4: its numbers differ from the minimiser's in the fifth decimal
    default = bootstrap_interval(old_platt_ece_10_bin({}), conf, correct, resamples=200, bounds=info.bounds)
    for ours, theirs in ((new.estimate, default.estimate), (new.low, default.low), (new.high, default.high)):
        assert ours == pytest.approx(theirs, abs=1e-4)


# -- progress while the intervals are computed -------------------------------------------------------


def test_aggregate_runs_reports_each_run_before_computing_it() -> None:
    from pytest_holistic.records import RunInfo
    from pytest_holistic.report.aggregate import RunResults, aggregate_runs

    runs = [RunResults(RunInfo(f"r{k}", name, "test", "local", {}, {}, (), (), ())) for k, name in enumerate(("boolq", "mmlu"))]
    seen: list[tuple[str, int, int, bool]] = []

    def progress(name: str, k: int, total: int) -> None:
        seen.append((name, k, total, any(run._metrics for run in runs[k - 1 :])))

    aggregate_runs(runs, progress)
    assert seen == [("boolq", 1, 2, False), ("mmlu", 2, 2, False)]
    assert all(None in run._metrics for run in runs)  # computed, and kept for the gates and writers
    aggregate_runs(runs)  # no progress callback: nothing to tell


SCRIPT = '{"generate": {"capital of France": " Paris", "capital of Japan": " Tokyo"}, "default": " no"}'


@pytest.mark.parametrize(("flags", "shown"), [(("-q",), True), ((), True), (("-q", "-q"), False)])
def test_terminal_names_each_scenario_while_its_intervals_are_computed(
    pytester: pytest.Pytester, flags: tuple[str, ...], shown: bool
) -> None:
    pytester.makepyfile(test_capitals=capitals())
    Path(pytester.path, "script.json").write_text(SCRIPT)
    result = pytester.runpytest("--model", "scripted:script.json", *flags)
    assert result.ret == 0  # -q -q prints no outcome line to parse
    lines = [line for line in result.outlines if "computing intervals" in line]
    assert lines == (["computing intervals: capitals (1/1)"] if shown else [])
