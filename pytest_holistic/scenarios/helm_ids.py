"""HELM's instance ids: a scenario declares how HELM's class orders the instances it returns, and gets HELM's ids.

HELM's runner gives every instance of a scenario ``id{n}``, ``n`` its position in the list the scenario class returns,
when any instance lacks an id (``with_instance_ids`` in helm/benchmark/scenarios/scenario.py, called from
helm/benchmark/runner.py), before any subsampling. Its classes return one split after another (BoolQ: train, then
dev), so a row's id depends on every row before it in HELM's order, not on the row. The project reads rows in its
own order (a shipped file mixes splits); ``HelmIds`` says which splits HELM's class emits and in which order, and
whether one HELM run covers one group only (MMLU runs per subject, so the count restarts per subject). Perturbations
then draw from ``Random(helm_id)``, as HELM's do (``Instance.seed_id``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..errors import ScenarioError
from .instance import Instance


@dataclass(frozen=True)
class HelmIds:
    """How HELM numbers a scenario's instances.

    ``splits``: the project's split names in the order HELM's class emits them; instances of another split get no
    HELM id (HELM's class drops those rows). Within a split HELM keeps the rows' order, which is the load order.
    ``per_group``: one HELM run per ``Instance.group`` (MMLU's subjects), each numbered from ``id0``; an instance
    without a group is in no such run and gets no id.
    ``by_split``: False when HELM's class keeps the file's order across splits (CivilComments' one CSV).
    ``answers``: within a split HELM's class emits the instances whose correct reference is ``answers[0]`` first, then
    ``answers[1]``... (IMDB reads the ``pos/`` folder, then ``neg/``); empty when it keeps the rows' order.
    ``shuffle_seed``: the class shuffles its whole list with ``random.seed(shuffle_seed)`` before returning it
    (RealToxicityPrompts: 0).
    ``hub``: False when HELM's order cannot be read off the hub's rows (IMDB: a pinned listing of its review files);
    the hub source's instances then carry no HELM id rather than a wrong one.
    """

    splits: tuple[str, ...]
    per_group: bool = False
    answers: tuple[str, ...] = ()
    shuffle_seed: int | None = None
    by_split: bool = True
    hub: bool = True

    def __post_init__(self) -> None:
        if not self.splits or len(set(self.splits)) != len(self.splits):
            raise ScenarioError(f"HelmIds(splits={self.splits!r}) must name each split once, in HELM's order")

    def assign(self, instances: Iterable[Instance]) -> tuple[Instance, ...]:
        """The instances in their load order, each with ``helm_id`` set (None for a split HELM does not read)."""
        loaded = tuple(instances)
        rank = {split: position for position, split in enumerate(self.splits)}
        runs: dict[str | None, list[int]] = {}
        for index, instance in enumerate(loaded):
            if instance.split in rank and not (self.per_group and instance.group is None):
                runs.setdefault(instance.group if self.per_group else None, []).append(index)
        ids: dict[int, str] = {}
        for members in runs.values():
            ordered = sorted(members, key=lambda index: self._key(rank, loaded[index]))  # stable: load order kept
            if self.shuffle_seed is not None:
                random.Random(self.shuffle_seed).shuffle(ordered)  # the global random.shuffle after random.seed(n)
            ids.update({index: f"id{n}" for n, index in enumerate(ordered)})
        return tuple(replace(instance, helm_id=ids.get(index)) for index, instance in enumerate(loaded))

    def _key(self, rank: dict[str, int], instance: Instance) -> tuple[int, int]:
        answer = instance.correct_references[0] if instance.correct_references else None
        position = self.answers.index(answer) if answer in self.answers else len(self.answers)
        return (rank[instance.split] if self.by_split else 0), position
