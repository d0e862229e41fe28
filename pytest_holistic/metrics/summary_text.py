"""How HELM prepares a summary and its article before any summarisation metric scores them.

HELM's summarisation metric removes one leading ``{`` and one trailing ``}`` from both (``_remove_braces`` in
``helm/benchmark/metrics/summarization_metrics.py``; the fact, not the code). Shared by the statistics computed here
and the scorers that run models (:mod:`.summarization`, :mod:`.summarization_scorers`).
"""

from __future__ import annotations


def remove_braces(text: str) -> str:
    """One leading ``{`` and one trailing ``}`` removed, as HELM's summarisation metric does before scoring."""
    text = text.removeprefix("{")
    text = text.removesuffix("}")
    return text
