"""XSum and CNN/DailyMail rows as HELM's SummarizationScenario reads them: cleaned, truncated, short train rows dropped.

Facts carried over from HELM 0.5.16 (src/helm/benchmark/scenarios/summarization_scenario.py and the run specs
``get_xsum_summarization_spec`` / ``get_cnndm_summarization_spec`` in run_specs/classic_run_specs.py):

* article and summary alike: newlines become spaces and whitespace runs one space; the article keeps its first
  ``doc_max_length`` (512) whitespace tokens, the summary all of them (CNN/DM's highlights, one sentence per line,
  become one line);
* a train row whose cleaned article has fewer than 50 or more than 150 words is dropped (it would be a few-shot
  example); for XSum also a train row whose article holds "Media playback is unsupported on your device" or
  "Last updated at", whose summary has 10 words or fewer, or whose summary is more than a fifth of its article.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from .helm_rows_mc import Reshaped
from .instance import Instance
from .loaders import Source

DOC_MAX_LENGTH = 512
XSUM_NOISE = ("Media playback is unsupported on your device", "Last updated at")


def clean(text: str, max_words: int | None = None) -> str:
    """HELM's ``_clean_and_truncate``: one line, single spaces, at most ``max_words`` whitespace tokens."""
    return " ".join(text.replace("\n", " ").split()[:max_words])


def summarization_row(article: str, summary: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """The row with its ``article`` and ``summary`` columns as HELM's class writes them; other columns kept."""
    if row.get(article) is None or row.get(summary) is None:
        raise KeyError(article if row.get(article) is None else summary)
    return {**row, article: clean(str(row[article]), DOC_MAX_LENGTH), summary: clean(str(row[summary]))}


def summarization_prepare(article: str, summary: str) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """``Fields(prepare=...)`` for a summarisation dataset whose columns are ``article`` and ``summary``."""
    return partial(summarization_row, article, summary)


@dataclass(frozen=True)
class TrainFilter:
    """Which train rows HELM keeps as few-shot examples (lengths in whitespace words of the cleaned texts)."""

    min_words: int = 50
    max_words: int = 150
    xsum: bool = False

    def keeps(self, instance: Instance) -> bool:
        if instance.split != "train":
            return True
        words = len(instance.input.split())
        if not self.min_words <= words <= self.max_words:
            return False
        if not self.xsum:
            return True
        summary = instance.correct_references[0] if instance.correct_references else ""
        noisy = any(marker in instance.input for marker in XSUM_NOISE)
        return not (noisy or len(summary.split()) <= 10 or len(summary.split()) / words > 0.2)

    def __call__(self, instances: list[Instance]) -> list[Instance]:
        return [instance for instance in instances if self.keeps(instance)]


def helm_train_rows(source: Source, *, xsum: bool = False) -> Reshaped:
    """``source`` without the train rows HELM's SummarizationScenario drops (see the module docstring)."""
    rule = TrainFilter(xsum=xsum)
    note = f"HELM's summarisation train filter: {rule.min_words}-{rule.max_words} words" + (", XSum's rules" if xsum else "")
    return Reshaped(source, rule, note)
