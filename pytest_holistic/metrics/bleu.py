"""BLEU-1 and BLEU-4 as HELM reports them: one n-gram order with NLTK's brevity penalty.

Source: HELM ``evaluate_reference_metrics.py`` (seeds digest §2.1): ``bleu_1`` is NLTK
``sentence_bleu([tokens(gold)], tokens(prediction), weights=(1, 0, 0, 0))`` and ``bleu_4`` the same with
``weights=(0, 0, 0, 1)``. With a single non-zero weight BLEU reduces to

    BLEU-n = BP * p_n,    p_n = clipped n-gram matches / max(1, #n-grams of the prediction),
    BP = 1 if c > r else exp(1 - r / c)   (c, r: prediction and reference lengths in tokens; 0 if c = 0)

(Papineni et al. 2002). We compute that closed form directly, rounding as NLTK does (``BP * exp(log p_n)``),
so the values equal NLTK's bit for bit (``tests/conformance/test_helm_metrics.py``). One deliberate
difference: where the prediction shares unigrams but no n-gram of the order asked for, NLTK warns and returns
``BP * exp(log(sys.float_info.min))`` (about 1e-308) for BLEU-4; we return exactly 0.0, silently (no
smoothing, as HELM). With no shared unigram both return 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from .base import reference_metric
from .tokenize import word_tokenize

HELM_BLEU = "Papineni et al. 2002 (BLEU); HELM evaluate_reference_metrics.py (NLTK sentence_bleu, single n-gram order)"


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu_n(gold_tokens: Sequence[str], predicted_tokens: Sequence[str], n: int) -> float:
    """Brevity-penalised modified ``n``-gram precision of a tokenised prediction against one reference."""
    if n < 1:
        raise ValueError(f"n-gram order must be at least 1, got {n}")
    predicted = _ngrams(predicted_tokens, n)
    reference = _ngrams(gold_tokens, n)
    matches = sum(min(count, reference[gram]) for gram, count in predicted.items())
    if matches == 0:
        return 0.0
    precision = matches / max(1, sum(predicted.values()))
    c, r = len(predicted_tokens), len(gold_tokens)
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * math.exp(math.log(precision))  # NLTK's rounding: a weighted sum of logs, exponentiated


@reference_metric(citation=HELM_BLEU, strip_prediction=True)
def bleu_1(gold: str, prediction: str) -> float:
    """Unigram precision with brevity penalty (HELM ``bleu_1``), on Treebank word tokens."""
    return bleu_n(word_tokenize(gold), word_tokenize(prediction), 1)


@reference_metric(citation=HELM_BLEU, strip_prediction=True)
def bleu_4(gold: str, prediction: str) -> float:
    """4-gram precision with brevity penalty (HELM ``bleu_4``): *not* cumulative BLEU-4.

    Cumulative BLEU-4 is the geometric mean of the 1- to 4-gram precisions; HELM weights only the 4-grams,
    so a prediction shorter than four tokens scores 0.
    """
    return bleu_n(word_tokenize(gold), word_tokenize(prediction), 4)
