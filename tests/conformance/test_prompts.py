"""The prompts HELM's own run specs and adapters build (golden/prompts.json) are the prompts the project builds.

Per core-suite case, the suite's marker builds the project's adapter through the code path a run uses
(``make_spec``, the offline edition, HELM's example draw) and every request is compared with HELM's, for HELM's
number of in-context examples (what ``--holistic-source hub`` runs) and for the offline edition's. Per varied case,
the same field values go straight into both sides' ``AdapterSpec``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic.adaptation import SPEC_KEYS, Adapter, examples_by_group, make_spec
from pytest_holistic.methods import HELM_METHODS
from pytest_holistic.plans import AdapterSpec
from pytest_holistic.runspec import make_adapter
from pytest_holistic.scenarios import Instance, Reference
from tests.conformance import golden
from tests.conformance.inputs.prompts import load_suite, marker_of

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = golden.cases("prompts")
SUITE_CASES = [case for case in CASES if case["kind"] == "suite"]
VARIED_CASES = [case for case in CASES if case["kind"] == "varied"]
OURS = {helm: ours for ours, helm in HELM_METHODS.items()}


def instances(rows: Sequence[Mapping[str, Any]]) -> tuple[Instance, ...]:
    return tuple(
        Instance(
            row["id"],
            row["input"],
            tuple(Reference(ref["text"], ref["correct"]) for ref in row["references"]),
            split=row["split"],
            group=row["group"],
        )
        for row in rows
    )


def our_requests(adapter: Adapter, instance: Instance) -> list[dict[str, Any]]:
    """The project's requests for one instance in HELM's terms: the text HELM sends, per option and mode."""
    spec = adapter.spec
    plan = adapter.plan(instance)
    if plan.generation is not None:
        return [{"reference_index": None, "mode": None, "prompt": plan.generation.prompt}]
    requests = plan.loglikelihood
    if spec.method == "ranking":  # a Yes and a No continuation per passage, after the same prompt
        return [{"reference_index": k, "mode": "original", "prompt": requests[2 * k].context} for k in range(len(requests) // 2)]
    tail = spec.output_suffix + spec.global_suffix  # after the scored option, as HELM's prompt ends
    texts = [request.context + request.continuation + tail for request in requests]
    if spec.method == "multiple_choice_calibrated":
        return [
            {"reference_index": k // 2, "mode": ("original", "calibration")[k % 2], "prompt": text}
            for k, text in enumerate(texts)
        ]
    return [{"reference_index": k, "mode": "original", "prompt": text} for k, text in enumerate(texts)]


def helm_requests(requests: Sequence[Mapping[str, Any]], instance_id: str, trial: int = 0) -> list[dict[str, Any]]:
    return [
        {"reference_index": r["reference_index"], "mode": r["mode"], "prompt": r["prompt"]}
        for r in requests
        if r["instance"] == instance_id and r["trial"] == trial
    ]


def check_fields(adapter: Adapter, helm: Mapping[str, Any], group: str | None = None) -> None:
    """The spec's own fields equal HELM's (temperature aside: decoding here is greedy, see docs/reference/helm-differences.md)."""
    spec = adapter.spec
    assert HELM_METHODS[spec.method] == helm["method"]
    assert (adapter.instructions(group) if spec.per_group else spec.instructions) == helm["instructions"]
    for name in ("input_prefix", "input_suffix", "output_prefix", "output_suffix", "instance_prefix"):
        assert getattr(spec, name) == helm[name], name
    assert (spec.global_prefix, spec.global_suffix, spec.multi_label, spec.sample_train) == (
        helm["global_prefix"],
        helm["global_suffix"],
        helm["multi_label"],
        helm["sample_train"],
    )
    if spec.method in ("multiple_choice_joint", "ranking"):
        assert (spec.reference_prefix, spec.reference_suffix) == (helm["reference_prefix"], helm["reference_suffix"])
    shots = spec.max_train_instances // 2 if spec.method == "ranking" else spec.max_train_instances
    assert shots == helm["max_train_instances"]
    if spec.method in ("generation", "multiple_choice_joint"):
        assert (spec.max_tokens, list(spec.stop)) == (helm["max_tokens"], helm["stop_sequences"])


def check_requests(adapter: Adapter, rows: Sequence[Mapping[str, Any]], helm: Mapping[str, Any], trial: int = 0) -> None:
    evaluated = [instance for instance in instances(rows) if instance.split != "train"]
    for instance in evaluated:
        assert our_requests(adapter, instance) == helm_requests(helm["requests"], instance.id, trial), instance.id
        found = [r for r in helm["requests"] if r["instance"] == instance.id and r["trial"] == trial]
        if adapter.spec.method in ("generation", "multiple_choice_joint"):
            generation = adapter.plan(instance).generation
            assert generation is not None
            assert (generation.max_tokens, list(generation.stop)) == (found[0]["max_tokens"], found[0]["stop"])
        if adapter.spec.method == "multiple_choice_joint":  # HELM reads the answer through {label: option}
            mapping = found[0]["output_mapping"]
            assert dict(zip(adapter.method.labels(instance), instance.choices, strict=True)) == mapping
            for label, option in mapping.items():
                plan = adapter.plan(instance)
                answer = adapter.interpret(instance, plan, _generated(f" {label}\n"))
                assert answer.predicted_index is not None and instance.choices[answer.predicted_index] == option


def _generated(text: str) -> Any:
    from pytest_holistic.models.base import GenerationResult

    return GenerationResult(text, (-0.5,), 10)


def _suite_params() -> list[Any]:
    params = []
    for case in SUITE_CASES:
        for run in case["runs"]:
            for edition in run["editions"]:
                name = f"{case['suite'].split('/')[0]}-{case['test']}[{run['group'] or 'all'}]-{edition}"
                params.append(pytest.param(case, run, edition, id=name))
    return params


@pytest.mark.parametrize(("case", "run", "edition"), _suite_params())
def test_core_suite_prompts_are_helms(case: dict[str, Any], run: dict[str, Any], edition: str) -> None:
    _args, kwargs = marker_of(case["suite"], case["test"])
    method = kwargs.get("adapter", "generation")
    helm = run["editions"][edition]
    spec = make_spec(method, **{name: value for name, value in kwargs.items() if name in SPEC_KEYS})
    per_group = kwargs.get("per_group", False)
    rows = [row for row in case["instances"] if row["group"] == run["group"]] if per_group else case["instances"]
    train = tuple(instance for instance in instances(case["instances"]) if instance.split == "train")
    source = "hub" if edition == "helm" else "local"
    adapter, named = make_adapter(spec, kwargs.get("local_max_train_instances"), train, source)
    assert (named is None) == (edition == "helm" or helm["spec"]["max_train_instances"] == spec.max_train_instances)
    check_fields(adapter, helm["spec"], run["group"])
    if method == "language_modeling":
        return  # HELM cuts documents into token windows; see docs/reference/helm-differences.md
    assert [example.id for example in adapter.examples_by_group.get(run["group"], ())] == helm["examples"][0]
    check_requests(adapter, rows, helm)


NOT_IN_HELM_0_5_16 = {
    "test_linear": "numeracy is not in HELM 0.5.16 (docs/reference/helm-differences.md, numeracy)",
    "test_plane": "numeracy is not in HELM 0.5.16 (docs/reference/helm-differences.md, numeracy)",
    "test_the_pile": "language_modeling cuts documents its own way (docs/reference/helm-differences.md)",
    "test_stereotype_pairs": "the project's own bias probe; HELM has no run spec for it",
    "test_role_prompts": "the project's own bias probe; HELM has no run spec for it",
}
"""Core-suite test functions with no HELM run spec to compare against, each with its reason."""


def suite_functions(suite: str = "core") -> set[str]:
    """Every test function a suite defines, read from its files (a new one must be compared or listed above)."""
    found: set[str] = set()
    for path in sorted((ROOT / "suites" / suite).glob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
                found.add(node.name)
    return found


def test_every_core_scenario_is_compared() -> None:
    """Each core-suite function is in the goldens (HELM's settings and, where fewer, the offline ones) or named above."""
    compared = {case["test"] for case in SUITE_CASES if case["suite"].startswith("core/")}
    defined = suite_functions("core")
    raft = {name for name in compared if name.startswith("test_raft_")}
    assert raft and "test_raft" not in defined  # RAFT's subsets are functions made by a loop, compared one by one
    missing = sorted(defined - compared - set(NOT_IN_HELM_0_5_16))
    assert not missing, f"core-suite functions with no HELM prompt golden: {missing}"
    assert not set(NOT_IN_HELM_0_5_16) & compared
    assert not (compared - raft) - defined, "goldens for functions the core suite no longer has"
    offline = [
        case["test"]
        for case in SUITE_CASES
        if case["local_max_train_instances"] is not None and case["suite"].startswith("core/")
    ]
    assert "test_narrative_qa" in offline
    for case in SUITE_CASES:
        assert all("helm" in run["editions"] for run in case["runs"])


def test_every_lite_scenario_is_compared() -> None:
    """Each function of the Lite suite is in the goldens, with HELM Lite's run spec for it."""
    compared = {case["test"] for case in SUITE_CASES if case["suite"].startswith("lite/")}
    defined = {  # imported, so the functions a loop makes (one per WMT14 language pair) count too
        name
        for path in (ROOT / "suites" / "lite").glob("test_*.py")
        for name in vars(load_suite(f"lite/{path.name}"))
        if name.startswith("test_")
    }
    assert compared == defined
    functions = {case["helm"]["function"] for case in SUITE_CASES if case["suite"].startswith("lite/")}
    assert {"get_gsm_spec", "get_math_spec", "get_med_qa_spec", "get_wmt_14_spec", "get_legalbench_spec"} <= functions


def _varied_spec(case: Mapping[str, Any], trial: int) -> AdapterSpec:
    fields = {name: value for name, value in case["spec"].items() if name not in ("method", "num_train_trials")}
    method = OURS[case["spec"]["method"]]
    if method == "ranking":  # the project counts example blocks, two per training query, as HELM's run spec is written
        fields["max_train_instances"] *= 2
    return replace(AdapterSpec(method=method, max_tokens=7, stop=("\n",), seed=trial), **fields)


@pytest.mark.parametrize("case", [pytest.param(case, id=case["name"]) for case in VARIED_CASES if "helm_error" not in case])
def test_varied_field_values_give_helms_prompts(case: dict[str, Any]) -> None:
    train = tuple(instance for instance in instances(case["instances"]) if instance.split == "train")
    for trial in range(case["spec"]["num_train_trials"]):
        spec = _varied_spec(case, trial)
        chosen = examples_by_group(spec, train)
        assert [example.id for example in chosen[None]] == case["examples"][trial]
        check_requests(Adapter(spec, chosen), case["instances"], case, trial)


@pytest.mark.parametrize("case", [pytest.param(case, id=case["name"]) for case in VARIED_CASES if "helm_error" in case])
def test_where_helms_sampler_fails_ours_takes_what_there_is(case: dict[str, Any]) -> None:
    """HELM raises (an empty label ends its draw early) or never returns; the project draws what the pool holds."""
    train = tuple(instance for instance in instances(case["instances"]) if instance.split == "train")
    spec = _varied_spec(case, 0)
    chosen = examples_by_group(spec, train)[None]
    assert len(chosen) <= min(len(train), spec.max_train_instances)
    assert len({example.id for example in chosen}) == len(chosen)
    adapter = Adapter(spec, chosen)
    for instance in instances(case["instances"]):
        if instance.split != "train":
            assert adapter.plan(instance).prompt
