"""The typed records that flow one way, from the items to the reporter: one per item, one per run, one per worker.

Each is frozen and converts to plain builtin types (``to_data``) to leave an xdist worker (``channels`` says how),
and back (``from_data``) on the controller; every reader uses attributes. ``ItemRecord.to_data()`` is also the
instance record written into ``report.json``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from .gates import Gate
from .metrics.stats import Stat
from .models.base import ModelInfo
from .plans import Completion
from .scenarios.instance import Contrast, Instance, Reference

Outcome = Literal["passed", "failed", "skipped", "error"]


_COMPLETION_FIELDS = frozenset(f.name for f in fields(Completion))


def _references_from_data(data: Sequence[Mapping[str, Any]]) -> tuple[Reference, ...]:
    return tuple(Reference(str(r["text"]), bool(r["correct"]), r.get("relevance")) for r in data)


def _instance_from_data(data: Mapping[str, Any]) -> Instance:
    contrasts = tuple(Contrast(str(c["input"]), _references_from_data(c["references"])) for c in data.get("contrasts") or ())
    return Instance(
        str(data["id"]),
        str(data["input"]),
        _references_from_data(data["references"]),
        str(data["split"]),
        data.get("group"),
        tuple(data.get("tags") or ()),
        data.get("perturbation"),
        contrasts,
        data.get("helm_id"),
    )


def _completion_to_data(completion: Completion) -> dict[str, Any]:
    data = completion.to_record()
    del data["prompt"]  # the prompt is a field of the record itself
    return data


def _completion_from_data(data: Mapping[str, Any], prompt: str) -> Completion:
    """Lists back to tuples; keys this version does not know (``correct``, newer fields) are left out."""
    values: dict[str, Any] = {
        key: tuple(value) if isinstance(value, list) else value for key, value in data.items() if key in _COMPLETION_FIELDS
    }
    values["prompt"] = prompt
    return Completion(**values)


def number_text(value: float) -> str | None:
    """A score as exact text (``repr``) for XML properties, or None when it is undefined (NaN) or infinite: JUnit
    readers parse a property's value as a number, and ``nan`` is not one, so such a value is left out."""
    return repr(float(value)) if math.isfinite(value) else None


@dataclass(frozen=True, slots=True)
class ItemRecord:
    """What one item produced: its instance, the model's answer, every score, the outcome and where it ran.

    ``perturbation`` is None for the original instance and names the variant otherwise. ``completion`` is
    None when the item errored before the model answered. Slotted and lean: the run is named by its key and
    the model not at all (both travel once per run, in the ``RunHeader``), so 10 000 records cost 10 000 small
    objects, not 10 000 copies of the run's description.
    """

    nodeid: str
    run_key: str
    instance: Instance
    perturbation: str | None
    prompt: str | None
    completion: Completion | None
    scores: Mapping[str, float]
    outcome: Outcome
    worker: str
    scorers: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()
    error: str | None = None
    counterexample: Mapping[str, Any] | None = None  # a failed property test's minimal input and both answers
    _data: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def instance_id(self) -> str:
        return self.instance.id

    @property
    def answered(self) -> bool:
        return self.completion is not None

    @property
    def cached(self) -> bool:
        """Whether every answer of this item came from the response cache (its timings are replayed)."""
        return self.completion is not None and self.completion.cached

    @property
    def truncated_tokens(self) -> int:
        """Prompt tokens dropped from the left to fit the model's window (``completion.truncated_tokens`` in the data)."""
        return self.completion.truncated_tokens if self.completion is not None else 0

    def to_data(self) -> dict[str, Any]:
        """The record as plain data, built once and then shared (the report, the reporter): read it, never change it.

        A record made by ``from_data`` keeps the data it came from, so the controller never serialises an item twice.
        """
        if self._data is None:
            object.__setattr__(self, "_data", self._build_data())
        return self._data  # type: ignore[return-value]

    def _build_data(self) -> dict[str, Any]:
        completion = self.completion
        return {
            "nodeid": self.nodeid,
            "run": self.run_key,
            "instance_id": self.instance.id,
            "perturbation": self.perturbation,
            "instance": self.instance.to_record(),
            "prompt": self.prompt,
            "completion": _completion_to_data(completion) if completion is not None else None,
            "scores": dict(self.scores),
            "scorers": {name: dict(scorer) for name, scorer in self.scorers.items()},
            "outcome": self.outcome,
            "skipped": list(self.skipped),
            "error": self.error,
            **({"counterexample": dict(self.counterexample)} if self.counterexample is not None else {}),
            "execution": {
                "worker": self.worker,
                "seconds": completion.seconds if completion is not None else None,
                "tokens_in": completion.tokens_in if completion is not None else None,
                "tokens_out": completion.tokens_out if completion is not None else None,
                "cached": self.cached,
            },
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ItemRecord:
        """The record back from its data, which it keeps as its own ``to_data()`` (it is not copied again)."""
        prompt = data.get("prompt")
        completion = data.get("completion")
        record = cls(
            nodeid=str(data["nodeid"]),
            run_key=str(data["run"]),
            instance=_instance_from_data(data["instance"]),
            perturbation=data.get("perturbation"),
            prompt=prompt,
            completion=_completion_from_data(completion, prompt or "") if completion is not None else None,
            scores={str(name): float(value) for name, value in data["scores"].items()},
            outcome=data["outcome"],
            worker=str(data["execution"]["worker"]),
            scorers={str(name): dict(scorer) for name, scorer in (data.get("scorers") or {}).items()},
            skipped=tuple(data.get("skipped") or ()),
            error=data.get("error"),
            counterexample=data.get("counterexample"),
        )
        object.__setattr__(record, "_data", data)
        return record


def _gate_to_data(gate: Gate) -> dict[str, Any]:
    return {f.name: getattr(gate, f.name) for f in fields(Gate)}


@dataclass(frozen=True)
class RunInfo:
    """What one run (a test function × its scenario) asked for: sent once per run, not with every item."""

    key: str
    scenario: str
    split: str
    source: str
    source_provenance: Mapping[str, Any]
    adapter: Mapping[str, Any]
    few_shot_ids: tuple[str, ...]
    metrics: tuple[str, ...]
    gates: tuple[Gate, ...]
    perturbations: tuple[Mapping[str, Any], ...] = ()  # each preset's description (name, family, params, variants)
    unchanged: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # variant label -> ids it left unchanged (dropped)
    perturbation_skips: tuple[str, ...] = ()  # one line per perturbation that could not run here (WordNet missing)
    edition: str | None = None  # how the run departs from HELM's settings (the offline edition's fewer examples), or None
    stop_early: bool = False  # its instances run in a seeded random order and it may stop once its gates are decided
    helm_group: str = ""  # the HELM run group whose leaderboard column averages this run with others; "": the scenario

    @property
    def name(self) -> str:
        """The scenario, marked when the run is not HELM's settings, so no one sets it beside a HELM number."""
        return self.scenario if self.edition is None else f"{self.scenario} [{self.edition}]"

    def to_data(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "scenario": self.scenario,
            "split": self.split,
            "source": self.source,
            "source_provenance": dict(self.source_provenance),
            "adapter": dict(self.adapter),
            "few_shot_ids": list(self.few_shot_ids),
            "metrics": list(self.metrics),
            "gates": [_gate_to_data(gate) for gate in self.gates],
            "perturbations": [dict(description) for description in self.perturbations],
            "unchanged": {label: list(ids) for label, ids in self.unchanged.items()},
            "perturbation_skips": list(self.perturbation_skips),
            "edition": self.edition,
            "stop_early": self.stop_early,
            "helm_group": self.helm_group,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RunInfo:
        return cls(
            key=str(data["key"]),
            scenario=str(data["scenario"]),
            split=str(data["split"]),
            source=str(data["source"]),
            source_provenance=dict(data["source_provenance"]),
            adapter=dict(data["adapter"]),
            few_shot_ids=tuple(data["few_shot_ids"]),
            metrics=tuple(data["metrics"]),
            gates=tuple(Gate(**gate) for gate in data["gates"]),
            perturbations=tuple(dict(description) for description in data.get("perturbations") or ()),
            unchanged={str(label): tuple(ids) for label, ids in (data.get("unchanged") or {}).items()},
            perturbation_skips=tuple(data.get("perturbation_skips") or ()),
            edition=data.get("edition"),
            stop_early=bool(data.get("stop_early", False)),
            helm_group=str(data.get("helm_group") or ""),
        )


@dataclass(frozen=True)
class RunHeader:
    """Sent with the first record of each run from each process: the run's description and the model's identity.

    ``order``, for a run that may stop early: the ids of its selected instances in collection order (the seeded
    order), which the controller feeds its confidence sequences in, whichever process answers first; ``groups``:
    each one's group (None: none), for gates on group numbers.
    """

    run: RunInfo
    model: ModelInfo | None
    order: tuple[str, ...] = ()
    groups: tuple[str | None, ...] = ()

    def to_data(self) -> dict[str, Any]:
        data = {"run": self.run.to_data(), "model": self.model.to_data() if self.model is not None else None}
        return {**data, "order": list(self.order), "groups": list(self.groups)} if self.order else data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RunHeader:
        model = data.get("model")
        order = tuple(str(instance) for instance in data.get("order") or ())
        groups = tuple(None if group is None else str(group) for group in data.get("groups") or ())
        return cls(RunInfo.from_data(data["run"]), ModelInfo.from_data(model) if model is not None else None, order, groups)


@dataclass(frozen=True)
class CollectedRun:
    """A run as collection saw it, selected or not: what lets every gate be decided, even for a run with no record.

    ``collected`` counts the run's items before ``-k``/``-m``/``--lf`` deselection, ``selected`` after it.
    """

    run: RunInfo
    collected: int
    selected: int

    def to_data(self) -> dict[str, Any]:
        return {"run": self.run.to_data(), "collected": self.collected, "selected": self.selected}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> CollectedRun:
        return cls(RunInfo.from_data(data["run"]), int(data["collected"]), int(data["selected"]))


def _stat_to_data(stat: Stat) -> dict[str, float]:
    return {"count": stat.count, "mean_": stat.mean_, "m2": stat.m2, "min": stat.min, "max": stat.max}


@dataclass(frozen=True)
class WorkerSummary:
    """What one process computed and on what: sent once at its end (see ``channels``)."""

    worker: str
    model: ModelInfo | None
    generation_requests: int
    loglikelihood_requests: int
    cache_hits: int
    batches: int
    model_seconds: float
    load_seconds: float
    batch_seconds: Stat
    device: str | None
    cuda_visible_devices: str | None
    batch_size: int | None
    cache_problem: str | None
    peak_rss_mib: float | None
    peak_gpu_mib: float | None
    model_failure: str | None = None  # why the model could not be loaded here, if it could not
    final: bool = True  # False for the counts so far that a worker's ledger keeps, in case it never reports back

    @property
    def requests_computed(self) -> int:
        return self.generation_requests + self.loglikelihood_requests

    def to_data(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["model"] = self.model.to_data() if self.model is not None else None
        data["batch_seconds"] = _stat_to_data(self.batch_seconds)
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> WorkerSummary:
        values = dict(data)
        values["model"] = ModelInfo.from_data(data["model"]) if data.get("model") else None
        values["batch_seconds"] = Stat(**data["batch_seconds"])
        return cls(**values)

    def report_data(self) -> dict[str, Any]:
        """The report's row for this worker: counts, timings and device (the model info is reported once)."""
        data = self.to_data()
        del data["model"], data["worker"]
        stat = self.batch_seconds
        data["batch_seconds"] = {
            "n": stat.count,
            "mean": stat.mean,
            "min": stat.min if stat.count else math.nan,
            "max": stat.max if stat.count else math.nan,
        }
        return data
