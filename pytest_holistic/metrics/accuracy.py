"""Reference-matching accuracy metrics, exactly as HELM defines them.

Source: HELM, ``evaluate_reference_metrics.py`` (stanford-crfm/helm), summarised in the seeds digest
§2.1, checked against HELM 0.5.16's own outputs by ``tests/conformance/test_helm_metrics.py``:
normalisation lowercases, drops ``string.punctuation``, replaces the articles a/an/the with a space wherever
``\b`` delimits them and collapses whitespace of every kind; F1 is over *sets* of normalised words, computed
as nltk's ``f_measure`` (``1 / (0.5 / P + 0.5 / R)``). Only an *empty* prediction scores 0 outright: a
whitespace-only one is compared like any other, so it matches a blank reference (HELM's ``if not pred``).
"""

from __future__ import annotations

import re
import string

from .base import reference_metric

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
HELM = "Liang et al. 2022, HELM §3 / evaluate_reference_metrics.py"


def normalize_text(text: str) -> str:
    """HELM/SQuAD normalisation: lowercase, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


@reference_metric(citation=HELM)
def exact_match(gold: str, prediction: str) -> float:
    """1 if the stripped prediction equals the stripped reference; an empty prediction scores 0."""
    if not prediction:
        return 0.0
    return float(gold.strip() == prediction.strip())


@reference_metric(citation=HELM)
def quasi_exact_match(gold: str, prediction: str) -> float:
    """1 if prediction and reference are equal after HELM normalisation."""
    if not prediction:
        return 0.0
    return float(normalize_text(gold) == normalize_text(prediction))


@reference_metric(citation=HELM)
def prefix_exact_match(gold: str, prediction: str) -> float:
    """1 if the stripped prediction starts with the stripped reference (zero-shot runs that ramble)."""
    if not prediction:
        return 0.0
    return float(prediction.strip().startswith(gold.strip()))


@reference_metric(citation=HELM)
def quasi_prefix_exact_match(gold: str, prediction: str) -> float:
    """``prefix_exact_match`` after HELM normalisation of both sides."""
    if not prediction:
        return 0.0
    return float(normalize_text(prediction).startswith(normalize_text(gold)))


@reference_metric(citation=HELM)
def f1_score(gold: str, prediction: str) -> float:
    """Word-overlap F1 over sets of normalised words; 0 when precision or recall is undefined or 0."""
    gold_words = set(normalize_text(gold).split())
    predicted_words = set(normalize_text(prediction).split())
    common = len(gold_words & predicted_words)
    if common == 0:
        return 0.0
    precision = common / len(predicted_words)
    recall = common / len(gold_words)
    return 1.0 / (0.5 / precision + 0.5 / recall)  # nltk's f_measure, rounding included
