"""Every adaptation method in one table: its class, its defaults, its name in HELM, whether it scores log-likelihoods
and what its answers can feed to population metrics. Everything else that depends on the method asks this table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .answer_methods import Generation, JointChoice, SeparateChoice
from .metrics.base import Column
from .plans import AnswerMethod, Layout
from .scoring_adapters import Calibrated, LanguageModeling, Ranking

_EVERY_METHOD = frozenset(
    {Column.TEXT, Column.REFERENCES, Column.GOLD_LABEL, Column.PREDICTED_LABEL, Column.CONFIDENCE, Column.CORRECT}
)
_OPTIONS = _EVERY_METHOD | {Column.NUM_CHOICES, Column.CLASS_ANSWER}


@dataclass(frozen=True)
class MethodKind:
    """One method: ``make`` builds it over a run's layout; ``defaults`` are its AdapterSpec values before the marker's;
    ``helm`` is its name in HELM's ``AdapterSpec.method``; ``loglikelihood`` says whether it scores text by its
    log-probability (so a model must return prompt log-probabilities); ``columns`` is what its answers can feed to
    population metrics (two-option log-probabilities only from scoring; HELM's classification view not from a
    ranking, whose answer is an order of passages)."""

    make: Callable[[Layout], AnswerMethod]
    defaults: Mapping[str, Any]
    helm: str
    loglikelihood: bool
    columns: frozenset[Column]


KINDS: Mapping[str, MethodKind] = {
    "generation": MethodKind(Generation, {}, "generation", False, _EVERY_METHOD | {Column.CLASS_ANSWER}),
    "multiple_choice_joint": MethodKind(
        JointChoice, {"input_prefix": "Question: ", "max_tokens": 1}, "multiple_choice_joint", False, _OPTIONS
    ),
    "multiple_choice_separate": MethodKind(
        SeparateChoice,
        {"output_prefix": "Answer: ", "max_tokens": 0, "stop": ()},
        "multiple_choice_separate_original",
        True,
        _OPTIONS | {Column.LOGPROB_MORE, Column.LOGPROB_LESS},
    ),
    "multiple_choice_calibrated": MethodKind(
        Calibrated,
        {"output_prefix": "Answer: ", "max_tokens": 0, "stop": ()},
        "multiple_choice_separate_calibrated",
        True,
        _OPTIONS | {Column.LOGPROB_MORE, Column.LOGPROB_LESS},
    ),
    "language_modeling": MethodKind(
        LanguageModeling,
        {"input_suffix": "", "output_prefix": "", "output_suffix": "", "max_train_instances": 0, "max_tokens": 0, "stop": ()},
        "language_modeling",
        True,
        frozenset({Column.DOCUMENT_LOGPROB, Column.NUM_BYTES, Column.NUM_TOKENS}),
    ),
    "ranking": MethodKind(
        Ranking,
        {
            "input_prefix": "Query: ",
            "reference_prefix": "Passage: ",
            "output_prefix": "Does the passage answer the query?\nAnswer: ",
            "max_train_instances": 4,
            "max_tokens": 0,
            "stop": (),
        },
        "ranking_binary",
        True,
        _EVERY_METHOD | {Column.NUM_CHOICES, Column.RANKED_RELEVANCES, Column.RANKED_GOLD},
    ),
}

METHODS = tuple(KINDS)
HELM_METHODS: Mapping[str, str] = {name: kind.helm for name, kind in KINDS.items()}
LOGLIKELIHOOD_METHODS = frozenset(name for name, kind in KINDS.items() if kind.loglikelihood)
COLUMNS: Mapping[str, frozenset[Column]] = {name: kind.columns for name, kind in KINDS.items()}
