"""HELM's Dyck language task (Suzgun et al. 2019): close the open brackets of a Dyck-n prefix.

HELM 0.5.16's ``DyckLanguageScenario`` (helm/benchmark/scenarios/dyck_language_scenario.py), drawn as it draws:
Python's ``random`` seeded with ``seed`` and numpy's legacy generator seeded with ``seed``, so the same arguments
give HELM's instances, text for text and in HELM's order. A word comes from the PCFG ``S -> (_i S )_i`` with
probability p = 0.5 (``random.random()``, then the pair index from numpy's ``randint(n)``), ``S -> S S`` with
probability q = 0.25, else empty; recursion deeper than 100 gives the empty word, and a word longer than its limit
becomes empty: the split's maximum for the whole word, 100 (HELM's default) for every inner one. A word shorter
than the split's minimum is redrawn; otherwise d = ``random.randint(1, 3)`` and the input is the word cut where,
counting from its end, the closing brackets first outnumber the opening ones by d (an empty cut redraws the word).
The target is the closing brackets that finish the input, with a leading space (`` ] ) }``). An input already in
the split, or (for test) among the train inputs, is skipped. Train comes first, then test, so HELM's id of an
instance is ``id<position>``: with HELM's 3 train instances, ``test=k`` gives HELM's first k test instances,
``id3``..``id<k+2>``, for any k.

HELM's classic run (``dyck_language_np=3``): 3 pair types, 3 train instances of length 4-50, 500 test instances of
length 52-100, seed 42.
"""

from __future__ import annotations

import random

from ...errors import ScenarioError
from ..instance import Instance, Reference
from ..scenario import Scenario
from ._common import check_sizes
from ._legacy_numpy import LegacyRandomState

PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"))
CLOSERS = frozenset(closing for _, closing in PAIRS)
P, Q = 0.5, 0.25
MAX_DEPTH = 100
INNER_MAX_LENGTH = 100
MAX_CLOSING = 3
LENGTHS = {"train": (4, 50), "test": (52, 100)}


class _Draws:
    """HELM's two streams: Python's ``random`` (branch, d) and numpy's legacy one (pair index)."""

    def __init__(self, seed: int, pairs: int) -> None:
        self.python = random.Random(seed)
        self.numpy = LegacyRandomState(seed)
        self.pairs = pairs

    def word(self, max_length: int, depth: int = 0) -> list[str]:
        if depth > MAX_DEPTH:
            return []
        draw = self.python.random()
        if draw < P:
            opening, closing = PAIRS[self.numpy.randint(self.pairs)]
            word = [opening, *self.word(INNER_MAX_LENGTH, depth + 1), closing]
        elif draw < P + Q:
            left = self.word(INNER_MAX_LENGTH, depth)
            word = left + self.word(INNER_MAX_LENGTH, depth)
        else:
            word = []
        return word if len(word) <= max_length else []

    def pair(self, split: str) -> tuple[str, str]:
        low, high = LENGTHS[split]
        while True:
            word = self.word(high)
            if len(word) >= low:
                prefix = _cut(word, self.python.randint(1, MAX_CLOSING))
                if prefix:
                    return " ".join(prefix), " " + " ".join(closing_sequence(prefix))


def _cut(word: list[str], closing: int) -> list[str]:
    """The prefix before the point where, read from the end, closers lead openers by ``closing``; [] if none."""
    lead = 0
    for index in range(len(word) - 1, -1, -1):
        lead += 1 if word[index] in CLOSERS else -1
        if lead == closing:
            return word[:index]
    return []


def closing_sequence(prefix: list[str]) -> list[str]:
    """The closing brackets that finish ``prefix``, innermost first."""
    stack: list[str] = []
    closers = {opening: closing for opening, closing in PAIRS}
    for symbol in prefix:
        if symbol in closers:
            stack.append(closers[symbol])
        else:
            stack.pop()
    return stack[::-1]


def dyck_language(*, pairs: int = 3, train: int = 3, test: int = 500, seed: int = 42) -> Scenario:
    """HELM's ``DyckLanguageScenario(num_parenthesis_pairs=pairs, num_train_instances=train,
    num_test_instances=test, seed=seed)`` as a scenario; ids ``dyck-<split>-<n>``, ``helm_id`` HELM's ``id<n>``."""
    if isinstance(pairs, bool) or not isinstance(pairs, int) or not 1 <= pairs <= len(PAIRS):
        raise ScenarioError(f"dyck_language: pairs={pairs!r} must be a whole number from 1 to {len(PAIRS)}")
    check_sizes("dyck_language", train, test)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ScenarioError(f"dyck_language: seed={seed!r} must be a whole number from 0 to 2**32 - 1 (numpy's seeds)")

    def instances() -> list[Instance]:
        draws = _Draws(seed, pairs)
        seen: set[str] = set()  # HELM skips an input already in the split and, for test, any train input
        made: list[Instance] = []
        for split, count in (("train", train), ("test", test)):
            index = 0
            while index < count:
                source, target = draws.pair(split)
                if source in seen:
                    continue
                seen.add(source)
                made.append(
                    Instance(
                        id=f"dyck-{split}-{index}",
                        input=source,
                        references=(Reference(target),),
                        split=split,
                        helm_id=f"id{len(made)}",
                    )
                )
                index += 1
        return made

    return Scenario(f"dyck_language_np{pairs}", local=instances, description=f"HELM Dyck-{pairs} completion, seed {seed}")
