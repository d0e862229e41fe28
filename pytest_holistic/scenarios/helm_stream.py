"""HELM's one-stream draws: a scenario class that calls ``random.seed(0)`` once and then draws row after row.

HELM's QuAC and NaturalQuestions classes (helm/benchmark/scenarios/quac_scenario.py, natural_qa_scenario.py) seed
Python's global generator once in ``get_instances`` and draw for each row in the order they read the rows (QuAC: its
stopping turn; NaturalQuestions: which short answer, and the row's position decides train or valid). A row's
instance therefore depends on every row read before it. ``helm_stream(source)`` reproduces that: while the source is
read, the row functions draw from one fresh ``random.Random(seed)`` and count the rows (``active()``); read without
it (a row function called on its own), they fall back to a generator of their own per row. The rows must arrive in
HELM's order, as the hub sources and the shipped files give them (train, then validation).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from .helm_rows_mc import Reshaped
from .instance import Instance
from .loaders import Source


@dataclass
class HelmStream:
    """The generator HELM draws from, and how many rows have been counted so far (``count``)."""

    random: random.Random
    count: int = 0

    def next_position(self) -> int:
        position, self.count = self.count, self.count + 1
        return position


_ACTIVE: ContextVar[HelmStream | None] = ContextVar("helm_stream", default=None)


def active() -> HelmStream | None:
    """The stream of the source being read, or None outside ``helm_stream``."""
    return _ACTIVE.get()


def _unchanged(instances: list[Instance]) -> list[Instance]:
    return instances


@dataclass(frozen=True)
class Streamed(Reshaped):
    """A source read under one fresh ``HelmStream`` per load."""

    seed: int = field(default=0)

    def __call__(self) -> Iterator[Instance]:
        token = _ACTIVE.set(HelmStream(random.Random(self.seed)))
        try:
            instances = list(self.inner())
        finally:
            _ACTIVE.reset(token)
        return iter(instances)


def helm_stream(source: Source, *, seed: int = 0) -> Streamed:
    """``source`` read as HELM's class reads its rows: one ``random.seed(seed)`` stream over all of them, in order."""
    return Streamed(source, _unchanged, f"HELM's draws: one random.seed({seed}) stream over the rows in order", seed)
