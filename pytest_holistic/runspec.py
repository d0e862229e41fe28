"""One scenario run: what ``@pytest.mark.holistic(...)`` on a test function asks for, validated at collection.

Every check that can fail on the user's input happens here, before any model work: unknown keys,
adapters and metrics, population metrics whose inputs the adapter cannot produce, and gates, which are
parsed once into ``Gate`` objects that travel to the controller as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import metrics as metric_registry
from .adaptation import GROUP_PLACEHOLDER, RENAMED_KEYS, SPEC_KEYS, Adapter, examples_by_group, make_spec
from .errors import UserError
from .gates import Gate, parse_gate
from .methods import KINDS, kind_named
from .metrics import MetricInfo, ScoredMetric, ScoresOf
from .metrics.base import INSTANCE_COLUMNS
from .perturbations.base import Perturbation
from .perturbations.catalog import resolve
from .perturbations.wordlists import WordLists
from .plans import AdapterSpec
from .records import RunInfo
from .scenarios.instance import Instance
from .scenarios.scenario import LoadedScenario, Scenario, subsample

RUN_KEYS = frozenset(
    {
        "scenario",
        "adapter",
        "metrics",
        "gates",
        "split",
        "max_instances",
        "perturbations",
        "local_max_train_instances",
        "stop_early",
    }
)
MARKER_KEYS = RUN_KEYS | SPEC_KEYS


@dataclass(frozen=True)
class MetricPlan:
    """The run's metrics by kind: computed per item on the worker, scored by a model, or over the whole run."""

    names: tuple[str, ...] = ()  # as requested, then the metrics they brought along
    instance: tuple[MetricInfo, ...] = ()
    scored: tuple[ScoredMetric, ...] = ()
    population: tuple[MetricInfo, ...] = ()


@dataclass(frozen=True)
class RunSpec:
    """Everything needed to evaluate one test function's scenario, identical on every worker."""

    key: str
    scenario: Scenario
    loaded: LoadedScenario
    instances: tuple[Instance, ...]
    adapter: Adapter
    metric_plan: MetricPlan
    gates: tuple[Gate, ...]
    variants: Variants = field(default_factory=lambda: Variants())
    edition: str | None = None
    """How the run departs from HELM's settings (the offline edition's fewer in-context examples), or None."""
    stop_early: bool = False
    """The run may stop once its gates are decided: its instances are in a seeded random order (``seeded_order``)."""
    info: RunInfo = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "info", self._describe())

    @property
    def items(self) -> tuple[Instance, ...]:
        """What becomes test items: each instance followed by its perturbed variants."""
        return self.variants.items or self.instances

    @property
    def spec(self) -> AdapterSpec:
        return self.adapter.spec

    @property
    def metrics(self) -> tuple[str, ...]:
        return self.metric_plan.names

    @property
    def instance_metrics(self) -> tuple[MetricInfo, ...]:
        """Metrics computed per item on the worker from the answer and the references."""
        return self.metric_plan.instance

    @property
    def scored_metrics(self) -> tuple[ScoredMetric, ...]:
        """Metrics a scoring model computes per answer, in batches on the worker."""
        return self.metric_plan.scored

    def _describe(self) -> RunInfo:
        return RunInfo(
            key=self.key,
            scenario=self.scenario.name,
            split=self.instances[0].split if self.instances else self.scenario.split,
            source=self.loaded.source,
            source_provenance=self.loaded.provenance,
            adapter=self.spec.to_dict(),
            few_shot_ids=tuple(example.id for example in self.adapter.examples),
            metrics=self.metrics,
            gates=self.gates,
            perturbations=tuple(perturbation.describe() for perturbation in self.variants.perturbations),
            unchanged=self.variants.unchanged,
            perturbation_skips=self.variants.skipped,
            edition=self.edition,
            stop_early=self.stop_early,
            helm_group=self.scenario.helm_group,
        )


@dataclass(frozen=True)
class Variants:
    """A run's perturbed copies: the presets, every item in order, and what was dropped or could not run.

    ``unchanged`` maps each variant label to the instances it left identical (dropped, as HELM does), which
    fmeval's delta and Dynaboard's consistency count as unchanged; ``skipped`` has one line per preset that
    cannot run here (WordNet missing).
    """

    perturbations: tuple[Perturbation, ...] = ()
    items: tuple[Instance, ...] = ()
    unchanged: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()


def make_variants(instances: tuple[Instance, ...], perturbations: tuple[Perturbation, ...]) -> Variants:
    """Each instance followed by its variants, seeded from its id, so every worker builds the same items."""
    if not perturbations:
        return Variants()
    usable, skipped = [], []
    for perturbation in perturbations:
        reason = perturbation.unavailable()
        if reason is None and perturbation.instance_transform is not None and not any(i.contrasts for i in instances):
            reason = "no instance of this scenario has a contrast set (a 'contrast' column or Instance(contrasts=...))"
        if reason is None:
            usable.append(perturbation)
        else:
            skipped.append(f"{perturbation.name} not run: {reason}")
    items: list[Instance] = []
    unchanged: dict[str, list[str]] = {}
    for instance in instances:
        items.append(instance)
        for perturbation in usable:
            made = perturbation.variants_of(instance)
            items.extend(made)
            labels = {variant.perturbation for variant in made}
            applies = perturbation.instance_transform is None or bool(instance.contrasts)
            for label in perturbation.labels():
                if label not in labels and applies:
                    unchanged.setdefault(label, []).append(instance.id)
    return Variants(tuple(usable), tuple(items), {label: tuple(ids) for label, ids in unchanged.items()}, tuple(skipped))


def seeded_order(instances: tuple[Instance, ...], seed: int, scenario: str) -> tuple[Instance, ...]:
    """The instances in a random order drawn from the run's seed and scenario name, the same in every process.

    A run that may stop early reads its instances as a uniformly random draw without replacement: that is what
    its confidence sequences assume, and a data file sorted by label (every negative review first) would
    otherwise decide a gate on one class. ``random.Random`` seeded with a string is the same in every process
    and Python version 3.2 on, whatever ``PYTHONHASHSEED`` is.
    """
    import random

    shuffled = list(instances)
    random.Random(f"pytest-holistic stop-early order {seed} {scenario}").shuffle(shuffled)
    return tuple(shuffled)


def item_id(instance: Instance) -> str:
    """The pytest param id: the instance id, then ``~label`` for a perturbed variant (``boolq-17~typos_hard``)."""
    return instance.id if instance.perturbation is None else f"{instance.id}~{instance.perturbation}"


def plan_metrics(
    names: tuple[str, ...], method: str, registered: Mapping[str, ScoredMetric] = metric_registry.SCORED
) -> MetricPlan:
    """Sort the requested metrics by kind; refuse unknown ones and those the adapter cannot feed.

    ``registered`` holds the model-scored metrics (the built-in ones and those plugins registered). A population
    metric over another metric's scores (``toxic_frac`` over ``toxicity``) brings that metric along, so asking for the
    aggregate alone works.
    """
    instance: dict[str, MetricInfo] = {}
    scored: dict[str, ScoredMetric] = {}
    population: dict[str, MetricInfo] = {}

    def add(name: str) -> None:
        if name in instance or name in scored or name in population:
            return
        if name in registered:
            scored[name] = registered[name]
        elif name in metric_registry.POPULATION:
            info = metric_registry.POPULATION[name]
            for column in info.inputs:
                if isinstance(column, ScoresOf):
                    add(column.metric)
                else:
                    _check_column(info, column, method)
            population[name] = info
        else:
            builtin = metric_registry.BUILTIN.get(name)
            if builtin is None:
                known = sorted({*metric_registry.known_names(), *registered})
                raise UserError(metric_registry.unknown_metric(name, known))
            instance[name] = builtin

    for name in names:
        add(name)
    ordered = tuple(dict.fromkeys([*names, *instance, *scored, *population]))
    return MetricPlan(ordered, tuple(instance.values()), tuple(scored.values()), tuple(population.values()))


def _check_column(info: MetricInfo, column: Any, method: str) -> None:
    if column in KINDS[method].columns or column in INSTANCE_COLUMNS:
        return
    producers = [name for name, kind in KINDS.items() if column in kind.columns]
    if not producers:
        raise UserError(
            f"metric {info.name!r} needs {column.value}, which no pytest-holistic adapter produces yet; remove it from metrics="
        )
    raise UserError(
        f"metric {info.name!r} needs {column.value}, which adapter {method!r} does not produce; "
        f"use adapter={' or '.join(repr(name) for name in producers)}"
    )


def build_run(
    key: str,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    source: str,
    max_instances: int | None,
    base: Path,
    perturb: tuple[str, ...] = (),
    data_dir: Path | None = None,
    word_lists: WordLists | None = None,
    scored: Mapping[str, ScoredMetric] = metric_registry.SCORED,
    stop_early: bool = False,
    *,
    helm_shots: bool = False,
) -> RunSpec:
    """Validate the marker's arguments and load the scenario; every problem is a one-line UserError.

    ``base`` is the folder of the test file pytest collected: relative data paths start there. ``perturb``
    names the perturbations the command line adds to every run whose marker does not say ``perturbations=False``.
    ``data_dir`` holds local copies of hub datasets (``--holistic-data-dir``); ``word_lists`` the user's copies
    of HELM's word lists (``--holistic-word-lists``; None: the project's); ``scored`` the model-scored metrics registered;
    ``stop_early`` the session's ``--holistic-stop-early``, which the marker's ``stop_early=`` overrides;
    ``helm_shots`` (``--holistic-helm-shots``) keeps HELM's in-context count on the shipped data too.
    """
    unknown = sorted(set(kwargs) - MARKER_KEYS)
    renamed = [name for name in unknown if name in RENAMED_KEYS]
    if renamed:
        raise UserError(
            f"@pytest.mark.holistic on {key}: {renamed[0]}= is now {RENAMED_KEYS[renamed[0]]}= (HELM's name), which comes "
            f"before every block after the first instead of after each example; write {RENAMED_KEYS[renamed[0]]}=..."
        )
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
    if not isinstance(method, str) or method not in KINDS:
        raise UserError(f"@pytest.mark.holistic on {key}: unknown adapter {method!r}; use one of {', '.join(KINDS)}")
    check_marker_values(key, kwargs, method)
    spec = make_spec(method, **{name: value for name, value in kwargs.items() if name in SPEC_KEYS})
    try:
        metric_plan = plan_metrics(_names(kwargs.get("metrics", KINDS[method].default_metrics), "metrics", key), method, scored)
    except UserError as error:
        raise UserError(f"@pytest.mark.holistic on {key}: {error}") from None
    gates = tuple(parse_gate(text, origin="marker") for text in _names(kwargs.get("gates", ()), "gates", key))
    split = kwargs.get("split", scenario.split)
    loaded = scenario.load(source, base, data_dir)
    instances = loaded.split(split)
    if not instances:
        raise UserError(f"scenario {scenario.name!r} has no instances in split {split!r}; choose split= or add instances")
    limits = [limit for limit in (kwargs.get("max_instances"), max_instances) if limit is not None]
    limit = min(limits) if limits else None  # each says "at most": the marker's and --holistic-max-instances both hold
    instances = subsample(instances, limit, spec.seed)
    stop_early = bool(kwargs.get("stop_early", stop_early))
    if stop_early:
        instances = seeded_order(instances, spec.seed, scenario.name)
    if GROUP_PLACEHOLDER in spec.instructions and (nameless := next((i for i in instances if i.group is None), None)):
        raise UserError(
            f"@pytest.mark.holistic on {key}: the instructions mention {GROUP_PLACEHOLDER} but instance {nameless.id!r} has "
            "no group; give the scenario's Fields a group= column or drop the placeholder"
        )
    local_shots = None if helm_shots else kwargs.get("local_max_train_instances")
    adapter, edition = make_adapter(spec, local_shots, loaded.split(scenario.train_split), loaded.source)
    asked = kwargs.get("perturbations", ())
    names = () if asked is False else (*_names(asked, "perturbations", key), *perturb)
    try:
        perturbations = resolve(names, word_lists)
    except UserError as error:
        raise UserError(f"@pytest.mark.holistic on {key}: {error}") from None
    if asked is False:
        from .perturbations import naming

        derived = [gate.expression for gate in gates if naming.parse(gate.metric) is not None]
        if derived:
            raise UserError(
                f"@pytest.mark.holistic on {key}: gate {derived[0]!r} needs perturbed variants but the marker says "
                "perturbations=False; drop the gate or the perturbations=False"
            )
    try:
        variants = make_variants(instances, perturbations)
    except UserError as error:  # a word list lacking what a preset needs (a race, genders)
        raise UserError(f"@pytest.mark.holistic on {key}: {error}") from None
    if asked is False and perturb:  # say why --holistic-perturb left this run alone
        variants = Variants(skipped=(f"{', '.join(perturb)} not applied: its marker says perturbations=False",))
    return RunSpec(key, scenario, loaded, instances, adapter, metric_plan, gates, variants, edition, stop_early)


def make_adapter(
    spec: AdapterSpec, local_shots: int | None, train: tuple[Instance, ...], source: str
) -> tuple[Adapter, str | None]:
    """The run's adapter and edition: HELM's prompt layout, in-context examples drawn from ``train`` as HELM draws them."""
    spec, edition = _edition(spec, local_shots, source)
    return Adapter(spec, examples_by_group(spec, train)), edition


def _edition(spec: AdapterSpec, local_shots: int | None, source: str) -> tuple[AdapterSpec, str | None]:
    """The spec a run uses and its edition: on the shipped data, ``local_max_train_instances`` replaces HELM's count.

    The offline editions of long-passage scenarios keep fewer in-context examples so a CPU run stays short; the
    run then says so in its name, so its numbers are never set beside HELM's.
    """
    if source != "local" or local_shots is None or local_shots == spec.max_train_instances:
        return spec, None
    return replace(spec, max_train_instances=local_shots), (
        f"offline edition: {local_shots} of HELM's {spec.max_train_instances} in-context examples"
    )


_TEXT_KEYS = frozenset(
    {
        "instructions",
        "global_prefix",
        "global_suffix",
        "input_prefix",
        "input_suffix",
        "reference_prefix",
        "reference_suffix",
        "output_prefix",
        "output_suffix",
        "instance_prefix",
    }
)
_FLAG_KEYS = frozenset({"per_group", "multi_label", "sample_train", "stop_early"})


def _whole(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _strings(value: Any, *, allow_empty_item: bool = True) -> bool:
    """A string, or a tuple/list of strings (the forms ``metrics=``, ``gates=`` and ``stop=`` accept)."""
    items = (value,) if isinstance(value, str) else value if isinstance(value, tuple | list) else None
    return items is not None and all(isinstance(item, str) and (allow_empty_item or item) for item in items)


def _value_problem(name: str, value: Any, method: str) -> str | None:
    """Why ``name=value`` cannot be used (with the fix), or None when it is fine; what depends on the method is a fact of
    its kind in :data:`.methods.KINDS` (an unknown method has none: the marker's adapter= is refused on its own)."""
    kind = kind_named(method)
    documents = kind is not None and kind.scores_documents
    if name == "max_instances":
        ok, wanted = value is None or _whole(value, 1), "a whole number >= 1 (or None for every instance)"
    elif name == "max_train_instances" and documents:
        ok, wanted = value == 0 and _whole(value, 0), f"0: {method} scores documents without few-shot examples"
    elif name == "max_train_instances" and kind is not None and kind.paired_examples:
        ok = _whole(value, 0) and value % 2 == 0
        wanted = "an even whole number >= 0 (example blocks: each training query gives one relevant and one non-relevant passage)"
    elif name in ("max_train_instances", "local_max_train_instances"):
        ok, wanted = _whole(value, 0), "a whole number >= 0 (0: no few-shot examples)"
    elif name in _FLAG_KEYS:
        ok, wanted = isinstance(value, bool), "True or False"
    elif name == "reference_prefix" and kind is not None and kind.numbered_options:
        ok = isinstance(value, str) and any(character.isalnum() for character in value)
        wanted = "a string with a letter or digit that numbers the options, e.g. 'A. ' or '(1) '"
    elif name == "chunk_words":
        ok = _whole(value, 1) and documents
        wanted = (
            "a whole number >= 1 (words per scored piece of a document)"
            if documents
            else "left out: chunk_words applies only to "
            + " or ".join(f"adapter={document_method!r}" for document_method, other in KINDS.items() if other.scores_documents)
        )
    elif name in _TEXT_KEYS and documents:
        ok, wanted = value == "", f"left out (or ''): {method} scores the document exactly as it is, with no prompt text"
    elif name == "max_tokens":
        least = 0 if kind is not None and kind.loglikelihood else 1
        ok, wanted = _whole(value, least), f"a whole number >= {least} (tokens to generate)"
    elif name == "seed":
        ok, wanted = _whole(value, 0), "a whole number >= 0"
    elif name in _TEXT_KEYS:
        ok, wanted = isinstance(value, str), "a string"
    elif name == "stop":
        ok = value is None or _strings(value, allow_empty_item=False)
        wanted = "a string or a tuple of non-empty strings, e.g. stop=('.',)"
    elif name == "metrics":
        ok, wanted = _strings(value), "a metric name or a tuple of names, e.g. metrics=('exact_match',)"
    elif name == "gates":
        ok, wanted = _strings(value), "a gate or a tuple of gates, e.g. gates=('exact_match >= 0.6',)"
    elif name == "perturbations":
        ok = value is False or _strings(value, allow_empty_item=False)
        wanted = (
            "a perturbation name, a tuple of names, e.g. perturbations=('robustness', 'typos_hard'), or False (never perturbed)"
        )
    elif name == "split":
        ok, wanted = isinstance(value, str) and bool(value.strip()), "a split name such as 'test' or 'validation'"
    else:
        return None
    return None if ok else f"must be {wanted}"


def check_marker_values(key: str, kwargs: Mapping[str, Any], method: str) -> None:
    """Type and range of every marker value, so a wrong one is a collection error naming it, not a failure per item."""
    for name, value in kwargs.items():
        problem = _value_problem(name, value, method)
        if problem is not None:
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            raise UserError(f"{key}: marker holistic({name}={shown}): {problem}")
    if GROUP_PLACEHOLDER in kwargs.get("instructions", "") and not kwargs.get("per_group", False):
        raise UserError(
            f"{key}: marker holistic(instructions=...) mentions {GROUP_PLACEHOLDER}, which is filled per group; add per_group=True"
        )


def _names(value: Any, what: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    try:
        names = tuple(value)
    except TypeError:
        raise UserError(
            f"@pytest.mark.holistic on {key}: {what}= must be a string or a tuple of strings, got {value!r}"
        ) from None
    return names
