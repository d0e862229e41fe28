"""fmeval's QA-accuracy word metrics and its factual-knowledge score, as fmeval 1.2.3's code computes them.

Source: Amazon fmeval (seeds digest §2.1; ``eval_algorithms/qa_accuracy.py``, ``factual_knowledge.py`` and
``normalize_text_quac_protocol`` in ``eval_algorithms/util.py``), checked against fmeval's own outputs by
``tests/conformance/test_fmeval_metrics.py``:

- both texts are ``strip()``-ed, then normalised: lower-cased, every ``string.punctuation`` character dropped,
  split on the *space character only*, empty pieces and the pieces ``a``/``an``/``the`` dropped, joined with
  one space. A piece holding another whitespace character stays whole, so ``"the\\ncat"`` keeps its ``the``;
- the words are the *set* of ``str.split()`` tokens of that (any whitespace, Unicode spaces included):
  ``"the\\ncat"`` gives {"the", "cat"}, and ``precision_over_words`` of it against ``cat`` is 0.5;
- precision = |common| / |output words|, recall = |common| / |answer words| (nltk's ``precision``/``recall``),
  F1 = ``1 / (0.5 / P + 0.5 / R)`` as nltk's ``f_measure`` computes it, 0 when P or R is 0; an undefined
  ratio (no words on the side it divides by) is 0;
- factual knowledge = 1 iff the lower-cased answer is a substring of the lower-cased output.

These words differ from HELM's ``f1_score`` (which collapses every kind of whitespace and removes articles
wherever ``\\b`` delimits them), so ``f1_over_words`` is fmeval's F1, not HELM's.

fmeval packs several valid answers into one target with ``<OR>``; every part counts and the best one wins,
an empty part included, as in fmeval: ``"Paris<OR>"`` holds the empty answer, which every output contains
(factual knowledge 1). Several correct references take the best, as every instance metric here does.
"""

from __future__ import annotations

import string
from collections.abc import Callable

from .base import reference_metric

FMEVAL = "Amazon fmeval: qa_accuracy (precision/recall/F1 over words) and factual_knowledge"
TARGET_DELIMITER = "<OR>"
ARTICLES = frozenset({"a", "an", "the"})
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_quac(text: str) -> str:
    """fmeval's QuAC normalisation: lower-case, no ASCII punctuation, no article or empty piece between spaces."""
    pieces = text.lower().translate(_PUNCTUATION).split(" ")
    return " ".join(piece for piece in pieces if piece and piece not in ARTICLES)


def answer_variants(gold: str) -> list[str]:
    """The answers packed into ``gold`` with fmeval's ``<OR>`` delimiter, empty ones included."""
    return gold.split(TARGET_DELIMITER)


def _best(gold: str, prediction: str, score: Callable[[str, str], float]) -> float:
    return max(score(answer, prediction) for answer in answer_variants(gold))


def _words(text: str) -> set[str]:
    return set(normalize_quac(text.strip()).split())


def _precision(answer: str, prediction: str) -> float:
    output = _words(prediction)
    return len(output & _words(answer)) / len(output) if output else 0.0


def _recall(answer: str, prediction: str) -> float:
    expected = _words(answer)
    return len(expected & _words(prediction)) / len(expected) if expected else 0.0


def _f1(answer: str, prediction: str) -> float:
    output, expected = _words(prediction), _words(answer)
    if not output or not expected:
        return 0.0
    common = len(output & expected)
    if common == 0:
        return 0.0
    precision, recall = common / len(output), common / len(expected)
    return 1.0 / (0.5 / precision + 0.5 / recall)


def _contains(answer: str, prediction: str) -> float:
    return float(answer.lower() in prediction.lower())


@reference_metric(citation=FMEVAL)
def precision_over_words(gold: str, prediction: str) -> float:
    """Share of the output's normalised words that occur in the answer (penalises verbosity)."""
    return _best(gold, prediction, _precision)


@reference_metric(citation=FMEVAL)
def recall_over_words(gold: str, prediction: str) -> float:
    """Share of the answer's normalised words that occur in the output (an echoing model scores 1)."""
    return _best(gold, prediction, _recall)


@reference_metric(citation=FMEVAL)
def f1_over_words(gold: str, prediction: str) -> float:
    """Harmonic mean of precision and recall over fmeval's words (not HELM's ``f1_score`` words)."""
    return _best(gold, prediction, _f1)


@reference_metric(citation=FMEVAL)
def factual_knowledge(gold: str, prediction: str) -> float:
    """1 if the lower-cased answer occurs anywhere in the lower-cased output ("Germany, and ..." -> 1)."""
    return _best(gold, prediction, _contains)
