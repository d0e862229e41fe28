"""Oracle of the ``prompts`` section: HELM's run specs and adapters build the requests for the given instances.

HELM's adapters ask a window service whether a prompt fits the model; the harness answers "it fits" (no model
here), so no in-context example is dropped and no prompt is cut. HELM downloads RAFT's instruction file and
LegalBench's prompt settings; the harness gives ``get_raft_instructions`` and ``get_legalbench_instructions`` /
``get_legalbench_output_nouns`` the instructions and output nouns the project's suite uses instead (``datasets``, imported at the top
of HELM's RAFT module but not called by it, is a stub). Everything else is HELM's code as installed.
"""

from __future__ import annotations

import dataclasses
import signal
import sys
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _oracle import run

sys.modules.setdefault("datasets", types.ModuleType("datasets"))  # imported by HELM's RAFT scenario module, never used here

from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.adaptation.adapters import adapter as helm_adapter
from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory
from helm.benchmark.run_specs import classic_run_specs, lite_run_specs
from helm.benchmark.scenarios import legalbench_scenario, raft_scenario
from helm.benchmark.scenarios.scenario import CORRECT_TAG, Input, Instance, Output, Reference


class FitsEverything:
    """A window service for a model with no context limit."""

    def fits_within_context_window(self, text: str, expected_completion_token_length: int = 0) -> bool:
        return True

    def truncate_from_right(self, text: str, expected_completion_token_length: int = 0) -> str:
        return text


helm_adapter.WindowServiceFactory.get_window_service = staticmethod(lambda *args, **kwargs: FitsEverything())

RAFT_INSTRUCTIONS: dict[str, str] = {}
raft_scenario.get_raft_instructions = lambda subset, cache_dir: RAFT_INSTRUCTIONS[subset]
LEGALBENCH_SETTINGS: dict[str, dict[str, str]] = {}
legalbench_scenario.get_legalbench_instructions = lambda subset, cache_dir: LEGALBENCH_SETTINGS[subset]["instructions"]
legalbench_scenario.get_legalbench_output_nouns = lambda subset, cache_dir: LEGALBENCH_SETTINGS[subset]["output_noun"]


def run_spec(function: str, arguments: dict[str, Any]) -> Any:
    for module in (lite_run_specs, classic_run_specs):
        if hasattr(module, function):
            return getattr(module, function)(**arguments)
    raise LookupError(f"HELM has no run-spec function {function}")


def helm_instances(rows: list[dict[str, Any]]) -> list[Instance]:
    return [
        Instance(
            input=Input(text=row["input"]),
            references=[
                Reference(Output(text=ref["text"]), tags=[CORRECT_TAG] if ref["correct"] else []) for ref in row["references"]
            ],
            split=row["split"],
            id=row["id"],
        )
        for row in rows
    ]


def requests(spec: AdapterSpec, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every request HELM's adapter makes for ``rows``, and the in-context examples it drew per train trial."""
    adapter = AdapterFactory.get_adapter(spec, tokenizer_service=None)  # type: ignore[arg-type]
    instances = helm_instances(rows)
    train = [instance for instance in instances if instance.split == "train"]
    examples = (
        [
            [instance.id for instance in adapter.sample_examples(list(train), seed=trial, sample_train=spec.sample_train)]
            for trial in range(spec.num_train_trials)
        ]
        if hasattr(adapter, "sample_examples")
        else []
    )
    states = adapter.adapt(instances, parallelism=1)
    return {
        "examples": examples,
        "requests": [
            {
                "instance": state.instance.id,
                "trial": state.train_trial_index,
                "reference_index": state.reference_index,
                "mode": state.request_mode,
                "prompt": state.request.prompt,
                "max_tokens": state.request.max_tokens,
                "stop": list(state.request.stop_sequences),
                "temperature": state.request.temperature,
                "num_train_instances": state.num_train_instances,
                "output_mapping": state.output_mapping,
            }
            for state in states
        ],
    }


def spec_data(spec: AdapterSpec) -> dict[str, Any]:
    return {
        key: value
        for key, value in dataclasses.asdict(spec).items()
        if value is None or isinstance(value, str | int | float | bool | list)
    }


def suite_case(case: dict[str, Any], instructions: dict[str, str]) -> dict[str, Any]:
    helm = case["helm"]
    if helm["function"] == "get_raft_spec":
        RAFT_INSTRUCTIONS[helm["arguments"]["subset"]] = instructions[case["test"]]
    rows = case["instances"]
    groups = [None] if not case["per_group"] else list(dict.fromkeys(row["group"] for row in rows if row["split"] != "train"))
    runs = []
    for group in groups:
        arguments = {key: (group if value == "{group}" else value) for key, value in helm["arguments"].items()}
        # A per-group suite's instances without a group form a group of their own, examples from their kind only.
        members = rows if not case["per_group"] else [row for row in rows if row["group"] == group]
        spec = run_spec(helm["function"], arguments).adapter_spec
        shots = {"helm": spec.max_train_instances}
        if case["local_max_train_instances"] is not None:
            shots["offline"] = case["local_max_train_instances"]
        editions = {}
        for edition, count in shots.items():
            adapted = dataclasses.replace(spec, max_train_instances=count)
            if spec.method == "language_modeling":  # token windows: nothing to compare without a tokenizer
                editions[edition] = {"spec": spec_data(adapted)}
            else:
                editions[edition] = {"spec": spec_data(adapted), **requests(adapted, members)}
        runs.append({"group": group, "arguments": arguments, "editions": editions})
    return {**case, "runs": runs}


def varied_case(case: dict[str, Any]) -> dict[str, Any]:
    """HELM's requests, or the error HELM raises (its sampler fails where an empty label ends the draw early)."""
    spec = AdapterSpec(**case["spec"], temperature=0.0, max_tokens=7, stop_sequences=["\n"])
    signal.signal(signal.SIGALRM, _never_ends)
    signal.alarm(20)
    try:
        return {**case, **requests(spec, case["instances"])}
    except Exception as error:  # noqa: BLE001 - any error HELM raises is recorded: the project's behaviour there is a decision
        return {**case, "helm_error": f"{type(error).__name__}: {error}"}
    finally:
        signal.alarm(0)


class NeverEnds(Exception):
    """HELM's sampler cycles forever over empty label pools when more examples are wanted than labelled ones."""


def _never_ends(signum: int, frame: Any) -> None:
    raise NeverEnds("HELM's example sampler did not finish in 20 s (it cycles over empty label pools)")


def main(inputs: dict[str, Any], files: Path) -> dict[str, Any]:
    instructions = inputs.get("raft_instructions", {})
    LEGALBENCH_SETTINGS.update(inputs.get("legalbench_settings", {}))
    cases = [suite_case(case, instructions) if case["kind"] == "suite" else varied_case(case) for case in inputs["cases"]]
    return {"cases": cases}


run(main)
