"""fmeval's three semantic-robustness perturbations: ButterFinger, RandomUppercase, AddRemoveWhitespace (digest §3.4).

fmeval adapted them from NL-Augmenter and makes ``num_perturbations = 5`` copies of each input. Its random
stream is one numpy generator per transform, seeded 5, that runs across the records in the order they are
processed, so what a record gets depends on which records came before it; under pytest-xdist every worker
would draw differently. Here each instance draws from its own stream (HELM's ``Random(instance.id)``, which
``Perturbation.variants_of`` passes in), so a variant is the same on any worker and in any order, and the
five variants are that stream's next five draws. The rule per character is fmeval's (checked against fmeval's
own code on fixed draws by tests/conformance/test_perturbations.py).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from types import MappingProxyType

from ._tables import rows
from .base import Perturbation, Transform
from .fairness import check_rate

NUM_PERTURBATIONS = 5
"""fmeval's ``num_perturbations`` default: how many perturbed copies of each input it evaluates."""


@functools.cache
def _keyboard() -> Mapping[str, tuple[str, ...]]:
    """NL-Augmenter's key map (``butter_finger_keys.tsv``): a key -> the characters a slip on it may type."""

    def decode(field: str) -> str:
        return " " if field == "SPACE" else field

    return MappingProxyType({decode(key): tuple(decode(chars)) for key, chars in rows("butter_finger_keys.tsv")})


def butter_finger(text: str, rng: random.Random, *, prob: float) -> str:
    """Keyboard slips (fmeval ``ButterFinger``): a mapped character, with probability ``prob``, becomes one of its map entries.

    fmeval's rule per character: take its lower case; if that is on the map, draw ``random() <= prob`` and
    then an entry; write the result upper-cased whenever the lower case differed from the character. The map
    lists the key itself and keys up to about two away, so a "slip" may type the right letter: the realised
    typo rate is below ``prob``. A character whose case does not round-trip changes even without a slip
    (the title-case digraph "ǅ" becomes "Ǆ"), as in fmeval.
    """
    check_rate("prob", prob)
    keyboard = _keyboard()
    out = []
    for char in text:
        lower = char.lower()
        typed = rng.choice(keyboard[lower]) if lower in keyboard and rng.random() <= prob else lower
        out.append(typed if lower == char else typed.upper())
    return "".join(out)


def random_upper_case(text: str, rng: random.Random, *, fraction: float) -> str:
    """Exactly ``int(len(text) * fraction)`` distinct positions upper-cased (fmeval ``RandomUppercase``).

    Positions are drawn over the whole text, spaces and digits included, as fmeval does, so fewer than that
    many characters may visibly change.
    """
    check_rate("fraction", fraction)
    chosen = set(rng.sample(range(len(text)), int(len(text) * fraction)))
    return "".join(char.upper() if index in chosen else char for index, char in enumerate(text))


def whitespace_add_remove(text: str, rng: random.Random, *, add_prob: float, remove_prob: float) -> str:
    """Spaces dropped and inserted at random (fmeval ``AddRemoveWhitespace``): "over the" -> "overthe", "quick" -> "q uick".

    One draw ``u`` per character: a whitespace character is deleted when ``u < remove_prob``; any other
    character is followed by an added space when ``u < add_prob``.
    """
    check_rate("add_prob", add_prob)
    check_rate("remove_prob", remove_prob)
    out = []
    for char in text:
        u = rng.random()
        if char.isspace():
            if not u < remove_prob:
                out.append(char)
        else:
            out.append(char + " " if u < add_prob else char)
    return "".join(out)


_SOURCE = (
    "fmeval {}, aws/fmeval src/fmeval/transforms/semantic_perturbations.py (adapted from NL-Augmenter, Dhole et al. 2021); "
    "num_perturbations=5, drawn from the instance's own random stream instead of fmeval's shared one"
)


def _preset(name: str, fmeval_name: str, transform: Transform, params: Mapping[str, float]) -> Perturbation:
    return Perturbation(
        name,
        "robustness",
        transform,
        params=MappingProxyType(dict(params)),
        perturbs_references=False,
        variants=NUM_PERTURBATIONS,
        source=_SOURCE.format(fmeval_name),
    )


PRESETS: tuple[Perturbation, ...] = (
    _preset("butter_finger", "ButterFinger", butter_finger, {"prob": 0.1}),
    _preset("random_upper_case", "RandomUppercase", random_upper_case, {"fraction": 0.1}),
    _preset("whitespace_add_remove", "AddRemoveWhitespace", whitespace_add_remove, {"add_prob": 0.05, "remove_prob": 0.1}),
)
"""fmeval's defaults: perturbation_prob 0.1, uppercase_fraction 0.1, add_prob 0.05 and remove_prob 0.1."""
