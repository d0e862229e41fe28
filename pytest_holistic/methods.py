"""Every adaptation method in one table: its class, its defaults, its name in HELM, whether it scores log-likelihoods,
what its answers can feed to population metrics, the metrics a run gets when it names none, and the rules of
``@pytest.mark.holistic`` that depend on the method. Everything else that depends on the method asks this table, so a
new method is its class and one entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .answer_methods import Generation, JointChoice, SeparateChoice
from .metrics.base import Column
from .metrics.sets import CALIBRATION
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
    log-probability (so a model must return prompt log-probabilities, and ``max_tokens=0`` is allowed); ``columns`` is
    what its answers can feed to population metrics (two-option log-probabilities only from scoring; HELM's
    classification view not from a ranking, whose answer is an order of passages); ``default_metrics`` are what a run
    computes when its marker gives no ``metrics=``.

    The rest are what the method changes about the marker's keys and the report, each False for most methods:
    ``scores_documents``: the input is a document scored exactly as it is, so no prompt text, no few-shot examples,
    ``chunk_words`` pieces, and no answer text to read; ``paired_examples``: each training instance is shown as two
    example blocks (a relevant and a non-relevant passage), so ``max_train_instances`` counts blocks and must be even;
    ``numbered_options``: the prompt lists the options numbered from ``reference_prefix``, which must hold a letter or
    digit; ``free_text_answer``: the answer is text the model wrote freely, so the word error rate between an answer
    and its perturbed version means something."""

    make: Callable[[Layout], AnswerMethod]
    defaults: Mapping[str, Any]
    helm: str
    loglikelihood: bool
    columns: frozenset[Column]
    default_metrics: tuple[str, ...]
    scores_documents: bool = False
    paired_examples: bool = False
    numbered_options: bool = False
    free_text_answer: bool = False


KINDS: Mapping[str, MethodKind] = {
    "generation": MethodKind(
        make=Generation,
        defaults={},
        helm="generation",
        loglikelihood=False,
        columns=_EVERY_METHOD | {Column.CLASS_ANSWER},
        default_metrics=("exact_match", "quasi_exact_match", "prefix_exact_match", "f1_score"),
        free_text_answer=True,
    ),
    "multiple_choice_joint": MethodKind(
        make=JointChoice,
        defaults={"input_prefix": "Question: ", "max_tokens": 1},
        helm="multiple_choice_joint",
        loglikelihood=False,
        columns=_OPTIONS,
        default_metrics=("exact_match", *CALIBRATION),
        numbered_options=True,
    ),
    "multiple_choice_separate": MethodKind(
        make=SeparateChoice,
        defaults={"output_prefix": "Answer: ", "max_tokens": 0, "stop": ()},
        helm="multiple_choice_separate_original",
        loglikelihood=True,
        columns=_OPTIONS | {Column.LOGPROB_MORE, Column.LOGPROB_LESS},
        default_metrics=("exact_match", *CALIBRATION),
    ),
    "multiple_choice_calibrated": MethodKind(
        make=Calibrated,
        defaults={"output_prefix": "Answer: ", "max_tokens": 0, "stop": ()},
        helm="multiple_choice_separate_calibrated",
        loglikelihood=True,
        columns=_OPTIONS | {Column.LOGPROB_MORE, Column.LOGPROB_LESS},
        default_metrics=("exact_match", *CALIBRATION),
    ),
    "language_modeling": MethodKind(
        make=LanguageModeling,
        defaults={
            "input_suffix": "",
            "output_prefix": "",
            "output_suffix": "",
            "max_train_instances": 0,
            "max_tokens": 0,
            "stop": (),
        },
        helm="language_modeling",
        loglikelihood=True,
        columns=frozenset({Column.DOCUMENT_LOGPROB, Column.NUM_BYTES, Column.NUM_TOKENS}),
        default_metrics=("bits_per_byte", "logprob_per_byte", "perplexity"),
        scores_documents=True,
    ),
    "ranking": MethodKind(
        make=Ranking,
        defaults={
            "input_prefix": "Query: ",
            "reference_prefix": "Passage: ",
            "output_prefix": "Does the passage answer the query?\nAnswer: ",
            "max_train_instances": 4,
            "max_tokens": 0,
            "stop": (),
        },
        helm="ranking_binary",
        loglikelihood=True,
        columns=_EVERY_METHOD | {Column.NUM_CHOICES, Column.RANKED_RELEVANCES, Column.RANKED_GOLD},
        default_metrics=("rr_at_10", "ndcg_at_10", *CALIBRATION),
        paired_examples=True,
    ),
}

METHODS = tuple(KINDS)
HELM_METHODS: Mapping[str, str] = {name: kind.helm for name, kind in KINDS.items()}


def kind_named(name: Any) -> MethodKind | None:
    """The kind a run's recorded ``adapter["method"]`` names, or None (a report read back may name none, or another)."""
    return KINDS.get(name) if isinstance(name, str) else None
