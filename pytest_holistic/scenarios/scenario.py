"""A named collection of instances, with an optional second source (the real dataset on the hub)."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from ..errors import ScenarioError
from .helm_ids import HelmIds
from .instance import Instance
from .loaders import DatasetUnavailable, GeneratorSource, Source


@dataclass(frozen=True)
class LoadedScenario:
    """The instances of one scenario as read from one source, validated.

    ``provenance`` is the source's own (path and file hash, dataset name and revision...) plus ``instances`` and
    ``instances_sha256``, the content of what was read, for every kind of source (a generator or a hub dataset
    has no file to hash).
    """

    name: str
    source: str
    instances: tuple[Instance, ...]
    provenance: dict[str, Any]

    def split(self, split: str) -> tuple[Instance, ...]:
        return tuple(instance for instance in self.instances if instance.split == split)


class Scenario:
    """Instances plus where to get them. ``local`` ships with the suite; ``hub`` is the real dataset.

    ``split`` is the split that becomes test items; ``train_split`` supplies few-shot examples. ``helm`` says how
    HELM's own class numbers the instances (``HelmIds``), for a scenario that follows HELM's: every source's
    instances then carry HELM's id as ``helm_id``. ``helm_group`` names the HELM run group whose leaderboard column
    averages this scenario's runs with others' (HELM Lite's ``legalbench`` over its five tasks); by default the name.
    """

    def __init__(
        self,
        name: str,
        local: Source | Callable[[], Iterable[Instance]] | Iterable[Instance],
        *,
        hub: Source | None = None,
        split: str = "test",
        train_split: str = "train",
        description: str = "",
        helm: HelmIds | None = None,
        helm_group: str | None = None,
    ) -> None:
        self.name = name
        self.helm = helm
        if helm_group is not None and (not isinstance(helm_group, str) or not helm_group.strip()):
            raise ScenarioError(f"Scenario({name!r}, helm_group={helm_group!r}): give the HELM run group's name as text")
        self.helm_group = helm_group or name
        self.split = split
        self.train_split = train_split
        self.description = description.strip()
        self._sources: dict[str, Source] = {"local": _as_source(local)}
        if hub is not None:
            self._sources["hub"] = _as_source(hub)
        self._loaded: dict[tuple[str, Path, Path | None], LoadedScenario] = {}

    def __repr__(self) -> str:
        return f"Scenario({self.name!r}, sources={list(self._sources)})"

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(self._sources)

    def source(self, name: str) -> Source:
        """The declared source ``name`` (``local`` or ``hub``): another scenario can read a part of the same rows."""
        if name not in self._sources:
            raise ScenarioError(f"scenario {self.name!r} has no {name!r} source; it has {', '.join(self._sources)}")
        return self._sources[name]

    def load(self, source: str = "local", base: Path | None = None, data_dir: Path | None = None) -> LoadedScenario:
        """Read and validate the instances; falls back to ``local`` if ``source`` is absent.

        ``base`` is the folder of the test file that uses the scenario (default: the current directory): relative
        data paths start there. ``data_dir`` (``--holistic-data-dir``) holds local copies of hub datasets, read
        instead of the hub. ``auto`` reads the hub source where it can be read and the shipped data otherwise; the
        provenance says which and why (``source_reason``). Cached per source, base and data folder, so one scenario
        shared by suites in two folders reads each folder's data.
        """
        folder = (base if base is not None else Path.cwd()).absolute()
        key = (source, folder, data_dir)
        if key not in self._loaded:
            if source == "auto":
                self._loaded[key] = self._load_auto(folder, data_dir)
            else:
                self._loaded[key] = self._read(source if source in self._sources else "local", folder, data_dir)
        return self._loaded[key]

    def _read(self, chosen: str, folder: Path, data_dir: Path | None, **why: Any) -> LoadedScenario:
        reader = self._reader(chosen, folder, data_dir)
        instances = tuple(reader())
        if self.helm is not None and (chosen != "hub" or self.helm.hub):
            instances = self.helm.assign(instances)
        provenance = {
            **reader.provenance(),
            **why,
            "instances": len(instances),
            "instances_sha256": instances_digest(instances),
        }
        _validate(self.name, instances, self.split, provenance)
        return LoadedScenario(self.name, chosen, instances, provenance)

    def _reader(self, chosen: str, folder: Path, data_dir: Path | None) -> Any:
        reader = self._sources[chosen].resolve(folder)
        with_data_dir = getattr(reader, "with_data_dir", None)
        return with_data_dir(data_dir) if callable(with_data_dir) else reader

    def _load_auto(self, folder: Path, data_dir: Path | None) -> LoadedScenario:
        """The hub source when its dataset can be read (a local copy, a reachable hub, the HF cache), else the shipped one."""
        if "hub" not in self._sources:
            return self._read("local", folder, data_dir, requested="auto", source_reason="the scenario has no hub= source")
        reader = self._reader("hub", folder, data_dir)
        unavailable = getattr(reader, "unavailable", None)
        reason = unavailable() if callable(unavailable) else None
        if reason is None:
            reached = getattr(reader, "reached", None)
            why = reached() if callable(reached) else "the hub source could be read"
            try:
                return self._read("hub", folder, data_dir, requested="auto", source_reason=why)
            except DatasetUnavailable as error:
                reason = error.reason
        return self._read("local", folder, data_dir, requested="auto", source_reason=reason, fallback=True)


def instances_digest(instances: Iterable[Instance]) -> str:
    """sha256 over each instance's record as canonical JSON (sorted keys, compact), one line each, in load order.

    The same data gives the same digest from any source and in any process; a changed input, reference, split or
    group changes it. About 5 ms per 1000 instances.
    """
    encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256()
    for instance in instances:
        digest.update(encoder.encode(instance.to_record()).encode())
        digest.update(b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class _Unresolved:
    """A user's own source without ``resolve``: it handles its own paths, so resolving leaves it as is."""

    inner: Any

    def __call__(self) -> Iterator[Instance]:
        return iter(self.inner())

    def provenance(self) -> dict[str, Any]:
        details: dict[str, Any] = self.inner.provenance()
        return details

    def resolve(self, base: Path) -> _Unresolved:
        return self


def _as_source(local: Any) -> Source:
    if hasattr(local, "provenance") and callable(local):
        return local if callable(getattr(local, "resolve", None)) else _Unresolved(local)
    if callable(local):
        return GeneratorSource(local)
    materialized = tuple(local)
    return GeneratorSource(lambda: iter(materialized))


def _validate(name: str, instances: tuple[Instance, ...], split: str, provenance: dict[str, Any]) -> None:
    where = provenance.get("path") or provenance.get("name") or provenance.get("where") or name
    counts = Counter((instance.split, instance.id) for instance in instances)
    duplicates = sorted(key for key, count in counts.items() if count > 1)
    if duplicates:
        shown = ", ".join(f"{instance_id!r} (split {split!r})" for split, instance_id in duplicates[:5])
        raise ScenarioError(
            f"scenario {name!r} ({where}) has duplicate instance id {shown}; instance ids must be unique within a split"
        )
    if not any(instance.split == split for instance in instances):
        splits = sorted({instance.split for instance in instances})
        raise ScenarioError(
            f"scenario {name!r} ({where}) has no instances in split {split!r} (splits present: {splits or 'none'}); "
            "add instances or choose the split with @pytest.mark.holistic(..., split=...)"
        )


@overload
def scenario(fn: Callable[[], Iterable[Instance]], /) -> Scenario: ...


@overload
def scenario(
    *, name: str | None = ..., split: str = ..., train_split: str = ..., hub: Source | None = ...
) -> Callable[[Callable[[], Iterable[Instance]]], Scenario]: ...


def scenario(
    fn: Callable[[], Iterable[Instance]] | None = None,
    /,
    *,
    name: str | None = None,
    split: str = "test",
    train_split: str = "train",
    hub: Source | None = None,
) -> Any:
    """Turn a generator of ``Instance`` objects into a :class:`Scenario` named after the function."""

    def wrap(factory: Callable[[], Iterable[Instance]]) -> Scenario:
        return Scenario(
            name or factory.__name__,
            GeneratorSource(factory),
            hub=hub,
            split=split,
            train_split=train_split,
            description=factory.__doc__ or "",
        )

    return wrap(fn) if fn is not None else wrap


def subsample(instances: tuple[Instance, ...], limit: int | None, seed: int) -> tuple[Instance, ...]:
    """At most ``limit`` instances chosen with ``seed`` (HELM's max_eval_instances), original order kept."""
    if limit is None or limit >= len(instances):
        return instances
    chosen = set(random.Random(seed).sample(range(len(instances)), limit))
    return tuple(instance for index, instance in enumerate(instances) if index in chosen)
