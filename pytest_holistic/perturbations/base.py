"""What a perturbation is: a pure ``perturb(text, rng) -> text`` with its parameters, and how it makes variants.

HELM's rules (``Perturbation.get_rng``, ``TextPerturbation.apply`` and ``data_augmenter.Processor`` in HELM
0.5.16): the random stream of an instance is ``random.Random(instance.id)`` (or ``Random(str(seed) +
instance.id)`` with a seed), keyed here by ``Instance.seed_id`` (HELM's id for a scenario that follows HELM), so every xdist worker and every rerun draws the same variant; a variant keeps its
instance's id; a perturbation that changes references perturbs them first, in order, and the input last, all
from that one stream; and a variant whose input equals the original's is dropped, whatever happened to its
references. Fairness perturbations change the references too, person names with one substitution memory per
instance so a name becomes the same name in every reference and in the input. In-context (train) examples are
never perturbed: only the evaluated instance goes through here.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..scenarios.instance import Instance
from .wordlists import PROJECT, WordLists

PerturbationFamily = Literal["robustness", "fairness", "equivariance"]
Transform = Callable[..., str]
"""``transform(text, rng, **params) -> text``; a stateful one also takes ``memory`` (a dict kept per instance), one
that reads word lists takes ``word_lists``."""


@dataclass(frozen=True)
class Perturbation:
    """One named, parametrised perturbation (a HELM or fmeval preset), e.g. ``typos_hard`` = typos with p=0.5.

    ``variants`` is how many perturbed copies of each instance it makes (fmeval draws 5; HELM 1), each the
    next draw of the instance's random stream. ``available`` returns a one-line reason when the perturbation
    cannot run here (WordNet not installed), else None. ``lists`` names the word lists it reads (``dialect``,
    ``person_names``, ``misspellings``) from ``word_lists``. ``seeded`` is False where HELM ignores the seed
    (its person-name perturbation always draws from ``Random(instance.id)``).
    """

    name: str
    family: PerturbationFamily
    transform: Transform
    params: Mapping[str, Any] = field(default_factory=dict)
    perturbs_references: bool = False
    stateful: bool = False
    variants: int = 1
    source: str = ""
    available: Callable[[], str | None] | None = None
    instance_transform: Callable[[Instance, random.Random], Instance | None] | None = field(default=None, compare=False)
    lists: tuple[str, ...] = ()
    word_lists: WordLists = PROJECT
    seeded: bool = True

    def __call__(self, text: str, rng: random.Random, memory: dict[str, Any] | None = None) -> str:
        """Perturb one text with this preset's parameters."""
        extra: dict[str, Any] = {"word_lists": self.word_lists} if self.lists else {}
        if self.stateful:
            extra["memory"] = {} if memory is None else memory
        return self.transform(text, rng, **extra, **self.params)

    def unavailable(self) -> str | None:
        return self.available() if self.available is not None else None

    def labels(self) -> tuple[str, ...]:
        """The item-id suffix of each variant: ``typos_hard``, or ``butter_finger.1`` ... ``.5`` for several."""
        if self.variants == 1:
            return (self.name,)
        return tuple(f"{self.name}.{k}" for k in range(1, self.variants + 1))

    def describe(self) -> dict[str, Any]:
        """Plain data for reports: name, family, parameters, variants, source and the word lists read (file, sha256)."""
        description = {
            "name": self.name,
            "family": self.family,
            "params": dict(self.params),
            "perturbs_references": self.perturbs_references,
            "variants": self.variants,
            "source": self.source,
        }
        if self.lists:
            description["word_lists"] = self.word_lists.describe(self.lists)
        return description

    def variants_of(self, instance: Instance, seed: int | None = None) -> list[Instance]:
        """The instance's perturbed copies whose input differs from its own, each tagged with its label (HELM's rules)."""
        key = instance.seed_id  # HELM's id where the scenario follows HELM: the same stream as HELM's Random(instance.id)
        rng = random.Random(key if seed is None or not self.seeded else str(seed) + key)
        out = []
        for label in self.labels():
            variant = self._one(instance, rng)
            if variant is not None and variant.input != instance.input:
                out.append(replace(variant, perturbation=label))
        return out

    def _one(self, instance: Instance, rng: random.Random) -> Instance | None:
        if self.instance_transform is not None:
            return self.instance_transform(instance, rng)
        memory: dict[str, Any] = {}
        references = instance.references
        if self.perturbs_references:  # references first, then the input, from the same stream (HELM's order)
            references = tuple(replace(ref, text=self(ref.text, rng, memory)) for ref in references)  # keeps relevance
        return replace(instance, input=self(instance.input, rng, memory), references=references)
