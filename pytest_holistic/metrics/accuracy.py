"""Reference-matching accuracy metrics, exactly as HELM defines them.

Source: HELM, ``evaluate_reference_metrics.py`` (stanford-crfm/helm), summarised in the seeds digest
§2.1, checked against HELM 0.5.16's own outputs by ``tests/conformance/test_helm_metrics.py``:
normalisation lowercases, drops ``string.punctuation``, replaces the articles a/an/the with a space wherever
``\b`` delimits them and collapses whitespace of every kind; F1 is over *sets* of normalised words, computed
as nltk's ``f_measure`` (``1 / (0.5 / P + 0.5 / R)``). Each function scores an *empty* prediction 0 (HELM's
``if not pred``), and the metrics strip the prediction first, as HELM's ``compute_reference_metrics`` strips every
completion: a blank answer is an empty one, so it never matches a blank reference (``metric.__wrapped__`` is the
unstripped function, compared with HELM's own functions in the conformance goldens).

Two more of HELM's reference functions, for the run specs that ask for them: ``exact_match_indicator`` (Dyck:
the text after the last space of each side, then exact match) and ``absolute_value_difference`` (numeracy: the
distance between two integers written with optional thousands commas, where text that is no integer counts as 0).
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


def _exact(gold: str, prediction: str) -> float:
    if not prediction:
        return 0.0
    return float(gold.strip() == prediction.strip())


@reference_metric(citation=HELM, strip_prediction=True)
def exact_match(gold: str, prediction: str) -> float:
    """1 if the stripped prediction equals the stripped reference; an empty prediction scores 0."""
    return _exact(gold, prediction)


@reference_metric(citation=HELM, strip_prediction=True)
def quasi_exact_match(gold: str, prediction: str) -> float:
    """1 if prediction and reference are equal after HELM normalisation."""
    if not prediction:
        return 0.0
    return float(normalize_text(gold) == normalize_text(prediction))


@reference_metric(citation=HELM, strip_prediction=True)
def prefix_exact_match(gold: str, prediction: str) -> float:
    """1 if the stripped prediction starts with the stripped reference (zero-shot runs that ramble)."""
    if not prediction:
        return 0.0
    return float(prediction.strip().startswith(gold.strip()))


@reference_metric(citation=HELM, strip_prediction=True)
def quasi_prefix_exact_match(gold: str, prediction: str) -> float:
    """``prefix_exact_match`` after HELM normalisation of both sides."""
    if not prediction:
        return 0.0
    return float(normalize_text(prediction).startswith(normalize_text(gold)))


@reference_metric(citation=HELM, strip_prediction=True)
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


@reference_metric(citation=HELM, strip_prediction=True)
def exact_match_indicator(gold: str, prediction: str) -> float:
    """Exact match of what follows the last space on each side ("... the answer is ## ]]" against "]]")."""
    return _exact(gold.split(" ")[-1].strip(), prediction.split(" ")[-1].strip())


def _integer_or_zero(text: str) -> int:
    """``int`` of the text without its commas; 0 for anything else (HELM's rule, so two non-numbers are 0 apart)."""
    try:
        return int(text.replace(",", ""))
    except ValueError:
        return 0


@reference_metric(direction="lower", bounds=(0.0, float("inf")), citation=HELM, strip_prediction=True)
def absolute_value_difference(gold: str, prediction: str) -> float:
    """``|gold - prediction|`` as integers; the largest over several correct references, as HELM takes it."""
    return float(abs(_integer_or_zero(gold) - _integer_or_zero(prediction)))
