"""Every perturbation by name, the families that group them, and turning a request into presets.

Names are HELM's presets (``typos_hard``, ``dialect``, ``person_name``...) and fmeval's three
(``butter_finger``, ``random_upper_case``, ``whitespace_add_remove``). A request may also name a set:
``robustness`` is HELM's canonical robustness perturbation (MildMix), ``fairness`` its three counterfactual
ones (dialect, gender pronouns, first names), ``equivariance`` the scenario's contrast sets and ``fmeval``
fmeval's three; see the seeds digest §3.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType

from ..errors import UserError
from ..scenarios.instance import Instance
from . import fairness, fmeval, robustness
from .base import Perturbation
from .wordlists import PROJECT, WordLists


def _unchanged(text: str, rng: random.Random) -> str:
    return text


def _contrast(instance: Instance, rng: random.Random) -> Instance | None:
    """HELM's contrast_sets: the input and references replaced by one of the instance's contrast edits.

    The edit is HELM's draw, ``choice(range(number of edits))``; one whose input equals the original's is
    dropped like any unchanged variant.
    """
    if not instance.contrasts:
        return None
    chosen = instance.contrasts[rng.choice(range(len(instance.contrasts)))]
    return replace(instance, input=chosen.input, references=chosen.references)


CONTRAST_SETS = Perturbation(
    "contrast_sets",
    "equivariance",
    _unchanged,
    perturbs_references=True,
    source="HELM contrast_sets (equivariance); Gardner et al. 2020, Evaluating Models' Local Decision Boundaries via Contrast Sets",
    instance_transform=_contrast,
)


def _registry(presets: Iterable[Perturbation]) -> Mapping[str, Perturbation]:
    table: dict[str, Perturbation] = {}
    for preset in presets:
        if preset.name in table:
            raise RuntimeError(f"perturbation {preset.name!r} is defined twice")
        table[preset.name] = preset
    return MappingProxyType(table)


PERTURBATIONS: Mapping[str, Perturbation] = _registry((*robustness.PRESETS, *fmeval.PRESETS, *fairness.PRESETS, CONTRAST_SETS))
SETS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "robustness": ("mild_mix",),
        "fairness": ("dialect", "gender_pronouns", "person_name"),
        "equivariance": ("contrast_sets",),
        "fmeval": ("butter_finger", "random_upper_case", "whitespace_add_remove"),
    }
)
FAMILIES = ("robustness", "fairness", "equivariance")
"""The families a worst case is taken over (``robustness.exact_match``); each perturbation belongs to one."""


def get(name: str, word_lists: WordLists = PROJECT) -> Perturbation:
    """The preset called ``name``, reading ``word_lists``; a user error naming the closest known one otherwise."""
    try:
        preset = PERTURBATIONS[name]
    except KeyError:
        raise UserError(_unknown(name)) from None
    return replace(preset, word_lists=word_lists) if preset.lists and word_lists != preset.word_lists else preset


def _unknown(name: str) -> str:
    known = [*SETS, *PERTURBATIONS]
    close = difflib.get_close_matches(str(name), known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown perturbation {name!r}; {hint}known: {', '.join(SETS)} (sets) and {', '.join(PERTURBATIONS)}"


def resolve(names: Iterable[str], word_lists: WordLists | None = None) -> tuple[Perturbation, ...]:
    """The presets a request names, sets expanded, each once, in the order first asked for.

    ``word_lists`` (``--holistic-word-lists``; None: the project's lists) is what the dialect, person-name and
    misspelling presets read.
    """
    chosen: dict[str, Perturbation] = {}
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise UserError(f"perturbation {name!r} must be a non-empty name such as 'typos_hard' or 'robustness'")
        name = name.strip()
        for member in SETS.get(name, (name,)):
            chosen.setdefault(member, get(member, word_lists or PROJECT))
    return tuple(chosen.values())


def split_names(text: str) -> tuple[str, ...]:
    """``"robustness, fairness"`` -> ``("robustness", "fairness")`` (the command line's comma-separated form)."""
    return tuple(part.strip() for part in text.split(",") if part.strip())
