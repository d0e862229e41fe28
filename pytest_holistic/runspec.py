"""One scenario run: what ``@pytest.mark.holistic(...)`` on a test function asks for, validated."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import metrics as metric_registry
from .adaptation import METHODS, SPEC_KEYS, Adapter, AdapterSpec, make_spec, select_examples
from .errors import UserError
from .gates import Gate, parse_gate
from .report.aggregate import check_population_metric
from .scenarios.instance import Instance
from .scenarios.scenario import LoadedScenario, Scenario, subsample

RUN_KEYS = frozenset({"scenario", "adapter", "metrics", "gates", "split", "max_instances"})
MARKER_KEYS = RUN_KEYS | SPEC_KEYS
CALIBRATION = ("ece_10_bin", "ece_1_bin", "selective_acc_at_10", "selective_cov_acc_area", "platt_ece_10_bin")
DEFAULT_METRICS: Mapping[str, tuple[str, ...]] = {
    "generation": ("exact_match", "quasi_exact_match", "prefix_exact_match", "f1_score"),
    "multiple_choice_joint": ("exact_match", *CALIBRATION),
    "multiple_choice_separate": ("exact_match", *CALIBRATION),
}
TOXICITY = "toxicity"


@dataclass(frozen=True)
class RunSpec:
    """Everything needed to evaluate one test function's scenario, identical on every worker."""

    key: str
    scenario: Scenario
    loaded: LoadedScenario
    instances: tuple[Instance, ...]
    adapter: Adapter
    metrics: tuple[str, ...]
    gates: tuple[Gate, ...]

    @property
    def spec(self) -> AdapterSpec:
        return self.adapter.spec

    @property
    def instance_metrics(self) -> tuple[str, ...]:
        """Metrics computed per item on the worker (the rest are computed over the run)."""
        return tuple(name for name in self.metrics if name in metric_registry.BUILTIN)

    @property
    def wants_toxicity(self) -> bool:
        return TOXICITY in self.metrics

    def describe(self) -> dict[str, Any]:
        """Plain data for records and the report."""
        return {
            "key": self.key,
            "scenario": self.scenario.name,
            "split": self.scenario.split if not self.instances else self.instances[0].split,
            "source": self.loaded.source,
            "source_provenance": self.loaded.provenance,
            "adapter": self.spec.to_dict(),
            "few_shot_ids": [example.id for example in self.adapter.examples],
            "metrics": list(self.metrics),
            "gates": [gate.expression for gate in self.gates],
        }


def build_run(key: str, args: tuple[Any, ...], kwargs: Mapping[str, Any], source: str, max_instances: int | None) -> RunSpec:
    """Validate the marker's arguments and load the scenario; every problem is a one-line UserError."""
    unknown = sorted(set(kwargs) - MARKER_KEYS)
    if unknown:
        raise UserError(
            f"@pytest.mark.holistic on {key} got unknown key(s) {', '.join(map(repr, unknown))}; "
            f"known keys: {', '.join(sorted(MARKER_KEYS))}"
        )
    positional = list(args)
    scenario = kwargs.get("scenario") or (positional.pop(0) if positional else None)
    if positional:
        raise UserError(f"@pytest.mark.holistic on {key} takes one positional argument (the scenario), got {len(args)}")
    if not isinstance(scenario, Scenario):
        raise UserError(
            f"@pytest.mark.holistic on {key} needs a scenario as first argument (a @scenario function, "
            f"Scenario(...) or loader), got {scenario!r}"
        )
    method = kwargs.get("adapter", "generation")
    if method not in METHODS:
        raise UserError(f"@pytest.mark.holistic on {key}: unknown adapter {method!r}; use one of {', '.join(METHODS)}")
    spec = make_spec(method, **{name: value for name, value in kwargs.items() if name in SPEC_KEYS})
    metric_names = _names(kwargs.get("metrics", DEFAULT_METRICS[method]), "metrics", key)
    for name in metric_names:
        try:
            if name in metric_registry.POPULATION:
                check_population_metric(name, method)
            elif name != TOXICITY:
                metric_registry.lookup(name)
        except UserError as error:
            raise UserError(f"@pytest.mark.holistic on {key}: {error}") from None
    gates = tuple(parse_gate(text, origin="marker") for text in _names(kwargs.get("gates", ()), "gates", key))
    split = kwargs.get("split", scenario.split)
    loaded = scenario.load(source)
    instances = loaded.split(split)
    if not instances:
        raise UserError(f"scenario {scenario.name!r} has no instances in split {split!r}; choose split= or add instances")
    limit = kwargs.get("max_instances", max_instances)
    instances = subsample(instances, limit, spec.seed)
    examples = select_examples(loaded.split(scenario.train_split), spec.max_train_instances, spec.seed, scenario.name)
    return RunSpec(key, scenario, loaded, instances, Adapter(spec, examples), metric_names, gates)


def _names(value: Any, what: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    try:
        names = tuple(value)
    except TypeError:
        raise UserError(f"@pytest.mark.holistic on {key}: {what}= must be a string or a tuple of strings, got {value!r}") from None
    return names
