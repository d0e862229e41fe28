"""The draws of numpy's legacy ``RandomState`` that HELM's generators make, without importing numpy.

HELM's Dyck and synthetic reasoning classes draw from ``np.random.seed(n)`` / ``np.random.RandomState(n)``. That
stream is frozen by numpy's compatibility policy (NEP 19), and it is the MT19937 generator Python's ``random`` also
runs; only the seeding and the way a bounded integer is cut from 32-bit words differ. So a ``random.Random`` given
the state numpy's integer seeding builds (``_legacy_seeding`` in numpy/random/_mt19937.pyx) yields numpy's 32-bit
words, and the few methods below turn them into numpy's numbers as numpy/random/src/distributions/distributions.c
does (``random_bounded_uint64_fill``: masked rejection; ``random_interval``: shuffles).
``tests/unit/test_legacy_numpy.py`` checks them against numpy itself.
"""

from __future__ import annotations

import random
from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")
_STATE_WORDS = 624


def _mask(bound: int) -> int:
    """The smallest all-ones bit mask covering ``bound``."""
    return (1 << bound.bit_length()) - 1


class LegacyRandomState:
    """``numpy.random.RandomState(seed)`` for the methods HELM's generators call, each consuming the same words."""

    def __init__(self, seed: int) -> None:
        if not 0 <= seed < 2**32:
            raise ValueError(f"seed {seed} must be in [0, 2**32), as numpy's integer seeding requires")
        words = [seed]
        for index in range(1, _STATE_WORDS):  # numpy's mt19937_seed: Knuth's linear recurrence, not init_by_array
            last = words[-1]
            words.append((1812433253 * (last ^ (last >> 30)) + index) & 0xFFFFFFFF)
        self._twister = random.Random()
        self._twister.setstate((3, (*words, _STATE_WORDS), None))  # position 624: the next word regenerates the block

    def _word(self) -> int:
        return self._twister.getrandbits(32)

    def _bounded(self, bound: int) -> int:
        """A uniform integer in [0, bound]: 32-bit words masked and rejected above ``bound`` (no word when 0)."""
        if bound == 0:
            return 0
        mask = _mask(bound)
        while True:
            value = self._word() & mask
            if value <= bound:
                return value

    def randint(self, low: int, high: int | None = None) -> int:
        """``randint(low, high)``: an integer in [low, high); ``randint(n)`` is [0, n)."""
        low, high = (0, low) if high is None else (low, high)
        return low + self._bounded(high - low - 1)

    def choice(self, population: Sequence[T], size: int) -> list[T]:
        """``choice(population, size)`` with replacement: ``size`` indices drawn as ``randint(0, len)`` draws them."""
        return [population[self._bounded(len(population) - 1)] for _ in range(size)]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """``shuffle(items)`` in place: from the last position down, swapped with a uniform one at or before it."""
        for position in range(len(items) - 1, 0, -1):
            other = self._bounded(position)
            items[position], items[other] = items[other], items[position]
