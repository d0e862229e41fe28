"""Names of the numbers perturbations add, so gates and reports agree on them.

``<family>.<metric>`` is HELM's worst case over the original and the family's variants
(``robustness.exact_match``, ``fairness.quasi_exact_match``, ``equivariance.exact_match``);
``<perturbation>.<metric>`` the same over one perturbation (``typos_hard.exact_match``), with
``<perturbation>.before.<metric>`` / ``.after.<metric>`` the score on the same instances before and after it.
``<prefix>.delta.<metric>`` is fmeval's mean absolute change of the score, ``<prefix>.consistency`` Dynaboard's
share of unchanged predictions and ``<prefix>.wer`` fmeval's word error rate between the original and the
perturbed outputs (open generation).
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalog import FAMILIES, PERTURBATIONS

SCORE_STATISTICS = ("before", "after", "delta")
PREDICTION_STATISTICS = ("consistency", "wer")


@dataclass(frozen=True)
class DerivedName:
    """A parsed derived metric: a family or perturbation, the statistic, and the per-item metric (None for predictions)."""

    prefix: str
    statistic: str  # worst, before, after, delta, consistency or wer
    base: str | None


def is_prefix(name: str) -> bool:
    return name in FAMILIES or name in PERTURBATIONS


def prefixes() -> list[str]:
    """Every family and perturbation name a derived metric can start with."""
    return [*FAMILIES, *PERTURBATIONS]


def parse(name: str) -> DerivedName | None:
    """``robustness.exact_match`` -> (robustness, worst, exact_match); None for a name no perturbation derives."""
    prefix, dot, rest = name.partition(".")
    if not dot or not rest or not is_prefix(prefix):
        return None
    if rest in PREDICTION_STATISTICS:
        return DerivedName(prefix, rest, None)
    statistic, dot, base = rest.partition(".")
    if dot and statistic in SCORE_STATISTICS and base:
        return DerivedName(prefix, statistic, base)
    return DerivedName(prefix, "worst", rest)


def derived(prefix: str, statistic: str, base: str | None = None) -> str:
    """The name of one derived number (the inverse of :func:`parse`)."""
    if base is None:
        return f"{prefix}.{statistic}"
    return f"{prefix}.{base}" if statistic == "worst" else f"{prefix}.{statistic}.{base}"


def variants_hint(prefix: str) -> str:
    """What adds the variants behind a ``<prefix>.*`` number: contrast sets come with the ``equivariance`` family."""
    wanted = "equivariance" if prefix == "contrast_sets" else prefix
    return f"add --holistic-perturb {wanted} or perturbations=({wanted!r},) to its marker"
