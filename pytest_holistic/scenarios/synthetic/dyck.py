"""HELM's Dyck language task (Suzgun et al. 2019): close the open brackets of a Dyck-n prefix.

Procedure from HELM ``dyck_language_scenario.py`` (stanford-crfm/helm). A word is drawn from the PCFG
``S -> (_i S )_i`` with probability p/n (p = 0.5), ``S -> S S`` with probability q = 0.25, else empty, with
recursion depth at most 100 and words longer than the split's maximum dropped; a word shorter than the split's
minimum is redrawn. The input is the word cut where, counting back from its end, the closing brackets first
outnumber the opening ones by d (d uniform in 1..3): the target is the d closing brackets that finish it,
written with a leading space and spaces between symbols (`` ] ) }``). Inputs are unique within a split, and no
test input repeats a train input.

HELM's sizes: n = 4 pair types in its run (``num_parenthesis_pairs``; 3 here, the task's Dyck-3 default),
3 train instances of length 4-50, 500 test instances of length 52-100, seed 42.
"""

from __future__ import annotations

import random

from ...errors import ScenarioError
from ..instance import Instance, Reference
from ..scenario import Scenario
from ._common import check_sizes

PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"))
P, Q = 0.5, 0.25
MAX_DEPTH = 100
MAX_CLOSING = 3
LENGTHS = {"train": (4, 50), "test": (52, 100)}


def _word(rng: random.Random, pairs: int, max_length: int, depth: int = 0) -> list[str]:
    if depth > MAX_DEPTH:
        return []
    draw = rng.random()
    if draw < P:
        opening, closing = PAIRS[rng.randrange(pairs)]
        word = [opening, *_word(rng, pairs, max_length, depth + 1), closing]
    elif draw < P + Q:
        word = _word(rng, pairs, max_length, depth) + _word(rng, pairs, max_length, depth)
    else:
        word = []
    return word if len(word) <= max_length else []


def _cut(word: list[str], closing: int) -> list[str]:
    """The prefix before the point where, read from the end, closers lead openers by ``closing``; [] if none."""
    lead = 0
    for index in range(len(word) - 1, -1, -1):
        lead += 1 if word[index] in {pair[1] for pair in PAIRS} else -1
        if lead == closing:
            return word[:index]
    return []


def closing_sequence(prefix: list[str]) -> list[str]:
    """The closing brackets that finish ``prefix``, innermost first."""
    stack = []
    closers = {opening: closing for opening, closing in PAIRS}
    for symbol in prefix:
        if symbol in closers:
            stack.append(closers[symbol])
        else:
            stack.pop()
    return stack[::-1]


def _pair(rng: random.Random, pairs: int, split: str) -> tuple[str, str]:
    low, high = LENGTHS[split]
    while True:
        word = _word(rng, pairs, high)
        if len(word) >= low:
            prefix = _cut(word, rng.randint(1, MAX_CLOSING))
            if prefix:
                return " ".join(prefix), " " + " ".join(closing_sequence(prefix))


def dyck_language(*, pairs: int = 3, train: int = 3, test: int = 30, seed: int = 42) -> Scenario:
    """Dyck-``pairs`` completion as a scenario: ``train`` and ``test`` instances from ``seed``; ids ``dyck-<split>-<n>``."""
    if isinstance(pairs, bool) or not isinstance(pairs, int) or not 1 <= pairs <= len(PAIRS):
        raise ScenarioError(f"dyck_language: pairs={pairs!r} must be a whole number from 1 to {len(PAIRS)}")
    check_sizes("dyck_language", train, test)

    def instances() -> list[Instance]:
        rng = random.Random(f"dyck_language:{pairs}:{seed}")
        seen: set[str] = set()
        made = []
        for split, count in (("train", train), ("test", test)):
            index = 0
            while index < count:
                source, target = _pair(rng, pairs, split)
                if source in seen:
                    continue
                seen.add(source)
                made.append(Instance(id=f"dyck-{split}-{index}", input=source, references=(Reference(target),), split=split))
                index += 1
        return made

    return Scenario(f"dyck_language_np{pairs}", local=instances, description=f"HELM Dyck-{pairs} completion, seed {seed}")
