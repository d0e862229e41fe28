"""Perturbations: HELM's robustness and fairness presets and fmeval's three, as pure functions and as variants.

* ``catalog.PERTURBATIONS`` maps each preset name (``typos_hard``, ``dialect``, ``butter_finger``...) to a
  :class:`~.base.Perturbation`: a pure ``perturb(text, rng) -> text`` with its parameters recorded; the
  functions themselves live in :mod:`.robustness`, :mod:`.fairness` and :mod:`.fmeval`.
* ``@pytest.mark.holistic(..., perturbations=("robustness", "fairness"))`` and ``--holistic-perturb`` turn
  them into one test item per (instance x variant).
* The same perturbations as Hypothesis strategies (``typos(of=...)``, ``dialects(of=...)``, ``names(of=...)``
  and ``holistic_settings``) are importable from here; Hypothesis is imported only when one is used.
"""

from __future__ import annotations

from typing import Any

from .base import Perturbation
from .catalog import FAMILIES, PERTURBATIONS, SETS, get, resolve

_STRATEGIES = frozenset(
    {
        "perturbed",
        "typos",
        "lowercase",
        "contractions",
        "expansions",
        "misspellings",
        "spaces",
        "extra_spaces",
        "filler_words",
        "synonyms",
        "mild_mixes",
        "dialects",
        "genders",
        "names",
        "butter_fingers",
        "random_upper_cases",
        "whitespace_changes",
        "holistic_settings",
    }
)


def __getattr__(name: str) -> Any:
    """The Hypothesis strategies, imported on first use (Hypothesis is not needed to run a suite)."""
    if name in _STRATEGIES:
        from . import strategies

        return getattr(strategies, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FAMILIES",
    "PERTURBATIONS",
    "SETS",
    "Perturbation",
    "butter_fingers",
    "contractions",
    "dialects",
    "expansions",
    "extra_spaces",
    "filler_words",
    "genders",
    "get",
    "holistic_settings",
    "lowercase",
    "mild_mixes",
    "misspellings",
    "names",
    "perturbed",
    "random_upper_cases",
    "resolve",
    "spaces",
    "synonyms",
    "typos",
    "whitespace_changes",
]
