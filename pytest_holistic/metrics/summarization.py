"""Summarisation metrics, the HELM way: extractiveness, METEOR, BERTScore, SummaC and QAFactEval.

Sources (facts only; the code is the project's own):

* Extractive fragments: Grusky, Naaman & Artzi 2018 (Newsroom), as SummEval's ``DataStatsMetric`` computes
  them (``data_stats_utils.Fragments``, case-insensitive): for each summary position the longest run of
  tokens shared with the article, scanning the article greedily (after a run the article scan resumes at the
  run's end, Newsroom's procedure); a run is kept as a fragment and the summary scan jumps past it.
  ``summarization_coverage`` = Σ|f| / |S|, ``summarization_density`` = Σ|f|² / |S|,
  ``summarization_compression`` = |A| / |S|; each is 0 when its denominator is 0, as SummEval returns.
  Names as HELM's ``summarization_metrics.py`` reports them. Before that HELM ``strip()``s the completion and
  then removes one leading ``{`` and one trailing ``}`` from it and from the article (:func:`.summary_text.remove_braces`, HELM's ``_remove_braces``:
  nothing else is stripped, so ``" {x} "`` becomes ``"x"`` but ``"{{x}}"`` keeps one brace each side);
  ``tests/conformance/test_helm_metrics.py`` checks all of this against HELM's own outputs. SummEval tokenises with spaCy's
  ``en_core_web_sm``; spaCy is not a dependency here, so both texts are tokenised with
  ``nltk.word_tokenize`` (``metrics.tokenize``), which splits words and punctuation the same way on news
  prose but writes double quotes as `````` / ``''``.
* METEOR as fmeval computes it (``transforms/summarization_accuracy_metrics.py``, ``MeteorScore``):
  ``nltk.translate.meteor_score.single_meteor_score(word_tokenize(reference), word_tokenize(output))``
  with nltk's defaults (alpha 0.9, beta 3, gamma 0.5, lower-casing, Porter stems, WordNet synonyms), the
  maximum over the references. WordNet 3.0 comes from the folder the synonym perturbation uses
  (``WNSEARCHDIR`` or Debian's ``/usr/share/wordnet``), laid out once for nltk under the pytest-holistic cache.
* BERTScore (Zhang et al. 2020), SummaC-ZS (Laban et al. 2022) and QAFactEval (Fabbri et al. 2022) need a
  model the user supplies; see :mod:`.summarization_scorers`.

Every metric here reads more than the answer (the article or the references), so each is a model-scored
metric (``ScoredMetric``) whose ``MetricInfo.inputs`` names its columns: the worker hands the scorer one list
per column (answer texts, then articles or references) and a scorer that cannot run here is a one-line skip.
"""

from __future__ import annotations

import importlib.metadata
import math
from collections.abc import Callable, Sequence

from ..builtin_options import BERTSCORE_MODEL, QAFACTEVAL_SCORER, SUMMAC_MODEL
from ..options import Option
from .base import Column, ContextScorer, Family, MetricInfo, ScoredMetric, ScorerUnavailable
from .summary_text import remove_braces
from .tokenize import word_tokenize

GRUSKY = "Grusky et al. 2018 (Newsroom) extractive fragments, as SummEval DataStatsMetric; HELM summarization_metrics.py"
FMEVAL_METEOR = "Banerjee & Lavie 2005 (METEOR); fmeval MeteorScore: nltk single_meteor_score over nltk word tokens"
BERTSCORE = "Zhang et al. 2020 (BERTScore): greedy cosine matching of contextual token embeddings; HELM, fmeval"
SUMMAC = "Laban et al. 2022 (SummaC-ZS, sentence granularity), as HELM summarization_metrics.py"
QAFACTEVAL = "Fabbri et al. 2022 (QAFactEval); HELM summarization_metrics.py"


# -- extractive fragments -----------------------------------------------------------------------------


def extractive_fragments(summary: Sequence[str], article: Sequence[str]) -> list[int]:
    """The lengths of the greedy extractive fragments of ``summary`` in ``article`` (tokens compared as given).

    At each summary position the article is scanned left to right; at every token that starts a shared run
    the run is measured and the scan resumes after it. The longest run found (the first on ties) becomes a
    fragment and the summary moves past it; a position with no match moves on by one token.
    """
    fragments: list[int] = []
    position = 0
    while position < len(summary):
        best = 0
        scan = 0
        while scan < len(article):
            if summary[position] != article[scan]:
                scan += 1
                continue
            length = 0
            limit = min(len(summary) - position, len(article) - scan)
            while length < limit and summary[position + length] == article[scan + length]:
                length += 1
            best = max(best, length)
            scan += length
        if best:
            fragments.append(best)
            position += best
        else:
            position += 1
    return fragments


def data_stats(summary: str, article: str) -> tuple[float, float, float]:
    """(coverage, density, compression) of ``summary`` against ``article``, on lower-cased nltk word tokens."""
    summary_tokens = [token.lower() for token in word_tokenize(summary)]
    article_tokens = [token.lower() for token in word_tokenize(article)]
    fragments = extractive_fragments(summary_tokens, article_tokens)
    size = len(summary_tokens)
    if size == 0:
        return 0.0, 0.0, 0.0
    return sum(fragments) / size, sum(length * length for length in fragments) / size, len(article_tokens) / size


class DataStatsScorer:
    """Coverage, density or compression of each summary against its article (pure: no model, never unavailable)."""

    version = "1"

    def __init__(self, statistic: int, name: str) -> None:
        self._statistic = statistic
        self.name = f"extractive fragments (Grusky et al. 2018; nltk word tokens): {name}"

    def score(self, texts: Sequence[str], articles: Sequence[str]) -> list[float]:
        return [
            data_stats(remove_braces(text.strip()), remove_braces(article))[self._statistic]
            for text, article in zip(texts, articles, strict=True)
        ]


# -- METEOR -------------------------------------------------------------------------------------------


def meteor(prediction: str, references: Sequence[str], wordnet: object) -> float:
    """fmeval's METEOR: nltk's ``single_meteor_score`` over nltk word tokens, the maximum over ``references``."""
    from nltk.translate.meteor_score import single_meteor_score

    hypothesis = word_tokenize(prediction)
    scores = [single_meteor_score(word_tokenize(reference), hypothesis, wordnet=wordnet) for reference in references]
    return max(scores, default=0.0)


class MeteorScorer:
    """METEOR with nltk's WordNet reader over the system's WordNet 3.0; unavailable (a skip) without WordNet."""

    name = "nltk meteor_score (WordNet 3.0)"

    def __init__(self) -> None:
        from .summarization_scorers import nltk_wordnet

        self._wordnet = nltk_wordnet()

    @property
    def version(self) -> str:
        return importlib.metadata.version("nltk")

    def score(self, texts: Sequence[str], references: Sequence[Sequence[str]]) -> list[float]:
        return [meteor(text, golds, self._wordnet) for text, golds in zip(texts, references, strict=True)]


# -- the registered metrics -----------------------------------------------------------------------------


def _scored(
    name: str,
    make: Callable[[str], ContextScorer],
    *,
    inputs: tuple[Column, ...],
    citation: str,
    bounds: tuple[float, float] = (0.0, 1.0),
    option: Option[str] | None = None,
    family: Family = "accuracy",
) -> ScoredMetric:
    info = MetricInfo(name, "higher", bounds, citation, make, kind="scored", inputs=(Column.TEXT, *inputs), family=family)
    return ScoredMetric(info=info, make_scorer=make, option=option)


def _data_stats_metric(name: str, statistic: int, bounds: tuple[float, float]) -> ScoredMetric:
    def make(_spec: str) -> ContextScorer:
        return DataStatsScorer(statistic, name)

    return _scored(name, make, inputs=(Column.SOURCE_TEXT,), citation=GRUSKY, bounds=bounds)


def _make_meteor(_spec: str) -> ContextScorer:
    return MeteorScorer()


def _model_metric(
    name: str, citation: str, bounds: tuple[float, float], inputs: tuple[Column, ...], option: Option[str]
) -> ScoredMetric:
    """A metric whose model the user names with ``option``; without one it is a one-line skip."""

    def make(spec: str) -> ContextScorer:
        from . import summarization_scorers

        if not spec:
            raise ScorerUnavailable(summarization_scorers.NEEDS[name.split("_")[0]])
        return summarization_scorers.make(name, spec)

    return _scored(name, make, inputs=inputs, citation=citation, bounds=bounds, option=option)


COVERAGE = _data_stats_metric("summarization_coverage", 0, (0.0, 1.0))
DENSITY = _data_stats_metric("summarization_density", 1, (0.0, math.inf))
COMPRESSION = _data_stats_metric("summarization_compression", 2, (0.0, math.inf))
METEOR = _scored("meteor", _make_meteor, inputs=(Column.REFERENCES,), citation=FMEVAL_METEOR)
BERTSCORE_PRECISION = _model_metric("bertscore_precision", BERTSCORE, (-1.0, 1.0), (Column.REFERENCES,), BERTSCORE_MODEL)
BERTSCORE_RECALL = _model_metric("bertscore_recall", BERTSCORE, (-1.0, 1.0), (Column.REFERENCES,), BERTSCORE_MODEL)
BERTSCORE_F1 = _model_metric("bertscore_f1", BERTSCORE, (-1.0, 1.0), (Column.REFERENCES,), BERTSCORE_MODEL)
SUMMAC_ZS = _model_metric("summac", SUMMAC, (-1.0, 1.0), (Column.SOURCE_TEXT,), SUMMAC_MODEL)
QAFACTEVAL_SCORE = _model_metric("qafacteval", QAFACTEVAL, (-math.inf, math.inf), (Column.SOURCE_TEXT,), QAFACTEVAL_SCORER)

REGISTERED: tuple[ScoredMetric, ...] = (
    COVERAGE,
    DENSITY,
    COMPRESSION,
    METEOR,
    BERTSCORE_PRECISION,
    BERTSCORE_RECALL,
    BERTSCORE_F1,
    SUMMAC_ZS,
    QAFACTEVAL_SCORE,
)
"""The model-scored summarisation metrics, in the order reports list them."""
