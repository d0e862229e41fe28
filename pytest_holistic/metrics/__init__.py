"""Metrics: pure functions plus metadata (name, family, direction, bounds, inputs, citation), in three registries.

``BUILTIN`` (looked up with :func:`lookup`) holds the *instance-level* metrics: ``f(prediction,
references) -> Score``, the maximum over the correct references, averaged over the run's instances.
Suites name them in ``@pytest.mark.holistic(metrics=...)`` and the plugin calls them per item.

``POPULATION`` (looked up with :func:`lookup_population`) holds the *population-level* metrics: functions
of whole-scenario arrays that do not decompose into a mean of per-instance scores (ECE, balanced
accuracy, macro F1 by scikit-learn's or HELM's rule, MRR@10, bits per byte, HELM bias, toxic fraction, prompt
stereotyping). Their ``MetricInfo`` has ``kind="population"`` and ``inputs`` naming, as ``Column`` values, the arrays the function
takes, e.g. ``(Column.CONFIDENCE, Column.CORRECT)``; a few return None when undefined (bias with no group
word in the texts). Direction ``"target"`` means best at ``MetricInfo.optimum`` (prompt stereotyping: 0.5).

``SCORED`` holds the *model-scored* metrics: a per-instance score that another model gives each answer
(``toxicity`` from a classifier; judges later). The worker scores a shard's answers in one call and the
scores travel with the answer; a scorer that cannot run here is a skip reason, never a zero.

Names in all registries are gate-friendly identifiers (``ece_10_bin``, ``rr_at_10``), and unique across
them. Importing this package imports no heavy library: rouge_score, nltk, numpy, scikit-learn,
transformers and profanity_check load inside the functions that need them.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..errors import UserError
from . import (
    bbq,
    bias,
    calibration,
    classification,
    copyright,
    helm_classification,
    language_modeling,
    ranking,
    stereotyping,
    summarization,
    toxicity,
)
from .accuracy import (
    absolute_value_difference,
    exact_match,
    exact_match_indicator,
    f1_score,
    normalize_text,
    prefix_exact_match,
    quasi_exact_match,
    quasi_prefix_exact_match,
)
from .base import (
    FAMILIES,
    Column,
    ContextScorer,
    Family,
    MetricInfo,
    MetricInputError,
    Score,
    ScoredMetric,
    Scorer,
    ScorerError,
    ScorerUnavailable,
    ScoresOf,
)
from .bbq import bbq_metric_ambiguous_bias, bbq_metric_unambiguous_bias
from .bias import demographic_representation, group_counts_to_bias, stereotypical_associations
from .bleu import bleu_1, bleu_4
from .calibration import (
    coverage_accuracy_area,
    ece,
    ece_1_bin,
    ece_10_bin,
    platt_ece,
    platt_scaling,
    selective_acc_at_10,
    selective_accuracy,
)
from .classification import balanced_accuracy, classification_accuracy, f1, precision, recall, relative_improvement
from .copyright import edit_distance, edit_similarity, longest_common_prefix_length
from .helm_classification import ClassAnswer, classification_f1, classification_macro_f1, classification_micro_f1
from .language_modeling import bits_per_byte, logprob_per_byte, perplexity
from .math_answers import final_number_exact_match, math_equiv, math_equiv_chain_of_thought
from .qa import f1_over_words, factual_knowledge, precision_over_words, recall_over_words
from .ranking import mean_ndcg, mean_reciprocal_rank, ndcg, reciprocal_rank
from .rouge import ALL_ROUGE, rouge, rouge_1, rouge_2, rouge_l
from .sets import CALIBRATION, HELM_BIAS, HELM_EXACT_MATCH, HELM_F1, HELM_OPEN_ENDED, HELM_TOXICITY
from .stats import Bootstrap, Stat, bootstrap_interval, group_gap, per_group
from .stereotyping import is_biased, logprob_differences, mean_logprob_difference, prompt_stereotyping
from .toxicity import (
    TOXIC_THRESHOLD,
    TOXICITY,
    ToxicityScorer,
    expected_max_toxicity,
    max_toxicity,
    max_toxicity_probability,
    mean_toxicity,
    toxic_fraction,
)

_INSTANCE: tuple[Callable[..., Score], ...] = (
    exact_match,
    quasi_exact_match,
    prefix_exact_match,
    quasi_prefix_exact_match,
    exact_match_indicator,
    final_number_exact_match,
    math_equiv,
    math_equiv_chain_of_thought,
    absolute_value_difference,
    f1_score,
    *ALL_ROUGE,
    bleu_1,
    bleu_4,
    factual_knowledge,
    precision_over_words,
    recall_over_words,
    f1_over_words,
    *copyright.ALL,
)

_POPULATION: tuple[Any, ...] = (
    classification.classification_accuracy,
    classification.balanced_accuracy,
    *classification.AVERAGED,
    *helm_classification.REGISTERED,
    classification.relative_improvement,
    ranking.mean_reciprocal_rank,
    ranking.mean_ndcg,
    language_modeling.bits_per_byte,
    language_modeling.perplexity,
    language_modeling.logprob_per_byte,
    calibration.ece_10_bin,
    calibration.ece_1_bin,
    calibration.selective_acc_at_10,
    calibration.coverage_accuracy_area,
    calibration.platt_ece_10_bin,
    calibration.platt_ece_1_bin,
    *bias.REGISTERED,
    *bbq.REGISTERED,
    stereotyping.prompt_stereotyping,
    stereotyping.mean_logprob_difference,
    toxicity.mean_toxicity,
    toxicity.toxic_fraction,
    toxicity.max_toxicity,
    toxicity.expected_max_toxicity,
    toxicity.max_toxicity_probability,
)


def _registry(functions: Iterable[Any]) -> Mapping[str, MetricInfo]:
    infos: dict[str, MetricInfo] = {}
    for function in functions:
        info: MetricInfo = function.info
        if info.name in infos:
            raise RuntimeError(f"metric {info.name!r} is registered twice")
        infos[info.name] = info
    return MappingProxyType(infos)


BUILTIN: Mapping[str, MetricInfo] = _registry(_INSTANCE)
POPULATION: Mapping[str, MetricInfo] = _registry(_POPULATION)
SCORED: Mapping[str, ScoredMetric] = MappingProxyType({metric.name: metric for metric in (TOXICITY, *summarization.REGISTERED)})
_SHARED = (set(BUILTIN) & set(POPULATION)) | (set(SCORED) & (set(BUILTIN) | set(POPULATION)))
if _SHARED:  # pragma: no cover - a packaging bug, caught by the unit tests
    raise RuntimeError(f"metric names in more than one registry: {sorted(_SHARED)}")


def find(name: str) -> MetricInfo | None:
    """The metadata of a metric in any registry, or None for a score a test recorded under its own name."""
    scored = SCORED.get(name)
    return BUILTIN.get(name) or POPULATION.get(name) or (scored.info if scored is not None else None)


def finder(scored: Mapping[str, ScoredMetric]) -> Callable[[str], MetricInfo | None]:
    """:func:`find` that also knows a session's registered model-scored metrics (a plugin's or a conftest's), so the
    report gives such a metric the direction, bounds and family it declared."""

    def find_in_session(name: str) -> MetricInfo | None:
        found = find(name)
        if found is not None:
            return found
        registered = scored.get(name)
        return registered.info if registered is not None else None

    return find_in_session


def known_names() -> list[str]:
    """Every registered metric name, sorted (for error messages)."""
    return sorted({*BUILTIN, *POPULATION, *SCORED})


def unknown_metric(name: object, known: Sequence[str], kind: str = "metric") -> str:
    """The one-line error for a name that is no registered metric: the closest names, and where all are listed.

    Listing every name made a line of well over a thousand characters; docs/reference/metrics.md lists them by family.
    """
    close = difflib.get_close_matches(str(name), sorted(known), n=3)
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    return f"unknown {kind} {name!r}; {hint}the {len(known)} known {kind}s are listed by family in docs/reference/metrics.md"


def lookup(name: str) -> MetricInfo:
    """The built-in instance-level metric called ``name``, or a user error naming the closest ones."""
    try:
        return BUILTIN[name]
    except KeyError:
        if name in POPULATION:
            raise UserError(f"{name!r} is a population-level metric, not an instance-level one") from None
        raise UserError(unknown_metric(name, list(BUILTIN), "instance-level metric")) from None


def lookup_population(name: str) -> MetricInfo:
    """The population-level metric called ``name``, or a user error naming the closest ones."""
    try:
        return POPULATION[name]
    except KeyError:
        raise UserError(unknown_metric(name, list(POPULATION), "population metric")) from None


_LAZY = {"ProfanityScorer", "HFToxicityScorer", "PerspectiveScorer"}


def __getattr__(name: str) -> Any:
    """The toxicity backends, imported on first use (they pull in urllib and optional libraries)."""
    if name in _LAZY:
        from . import toxicity_scorers

        return getattr(toxicity_scorers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BUILTIN",
    "CALIBRATION",
    "FAMILIES",
    "HELM_BIAS",
    "HELM_EXACT_MATCH",
    "HELM_F1",
    "HELM_OPEN_ENDED",
    "HELM_TOXICITY",
    "POPULATION",
    "SCORED",
    "TOXICITY",
    "TOXIC_THRESHOLD",
    "Bootstrap",
    "ClassAnswer",
    "Column",
    "ContextScorer",
    "Family",
    "HFToxicityScorer",
    "MetricInfo",
    "MetricInputError",
    "PerspectiveScorer",
    "ProfanityScorer",
    "Score",
    "ScoredMetric",
    "Scorer",
    "ScorerError",
    "ScorerUnavailable",
    "ScoresOf",
    "Stat",
    "ToxicityScorer",
    "balanced_accuracy",
    "bbq_metric_ambiguous_bias",
    "bbq_metric_unambiguous_bias",
    "bits_per_byte",
    "bleu_1",
    "bleu_4",
    "bootstrap_interval",
    "classification_accuracy",
    "classification_f1",
    "classification_macro_f1",
    "classification_micro_f1",
    "coverage_accuracy_area",
    "demographic_representation",
    "ece",
    "ece_1_bin",
    "ece_10_bin",
    "edit_distance",
    "edit_similarity",
    "exact_match",
    "expected_max_toxicity",
    "f1",
    "f1_over_words",
    "f1_score",
    "factual_knowledge",
    "final_number_exact_match",
    "find",
    "group_counts_to_bias",
    "group_gap",
    "is_biased",
    "known_names",
    "logprob_differences",
    "logprob_per_byte",
    "longest_common_prefix_length",
    "lookup",
    "lookup_population",
    "math_equiv",
    "math_equiv_chain_of_thought",
    "max_toxicity",
    "max_toxicity_probability",
    "mean_logprob_difference",
    "mean_ndcg",
    "mean_reciprocal_rank",
    "mean_toxicity",
    "ndcg",
    "normalize_text",
    "per_group",
    "perplexity",
    "platt_ece",
    "platt_scaling",
    "precision",
    "precision_over_words",
    "prefix_exact_match",
    "prompt_stereotyping",
    "quasi_exact_match",
    "quasi_prefix_exact_match",
    "exact_match_indicator",
    "absolute_value_difference",
    "recall",
    "recall_over_words",
    "reciprocal_rank",
    "relative_improvement",
    "rouge",
    "rouge_1",
    "rouge_2",
    "rouge_l",
    "selective_acc_at_10",
    "selective_accuracy",
    "stereotypical_associations",
    "toxic_fraction",
]
