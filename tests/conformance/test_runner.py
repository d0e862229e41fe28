"""pytest-holistic's whole run against HELM 0.5.16's whole ``helm-run``, instance by instance (``golden/runner.json``).

The golden is what ``helm-run`` produced (``tests/conformance/runner/generate.py``: HELM's scenario classes reading
the offline rows written where they download, its run specs, ``HuggingFaceClient`` and metrics) on a tiny GPT-2 that
``runner/model.py`` builds deterministically. Here the same model is rebuilt, the core suite's own files run on the
same rows in a pytest subprocess, and each record of ``report.json`` is matched with HELM's instance by
``Instance.helm_id`` (The Pile's documents, which HELM numbers by position and the suite does not, by their text).
The served cases run again with the same model behind ``runner/server.py``, an OpenAI-compatible server: HELM through
its ``OpenAILegacyCompletionsClient``, pytest through ``openai:``. There the model's answers carry log-probabilities,
so HELM computes calibration, and the runs' calibration numbers are compared too.

Tolerances: texts and counts are compared exactly; a number both sides compute with the same arithmetic from the same
answers (accuracy, F1, ROUGE-L, BLEU, the classification F1s) within ``EXACT`` (1e-6). Log-probabilities come from the same torch and transformers on both sides, but HELM
sends one request at a time and sums float32 token values one by one, while the project batches with padding: a sum
differs in its last digits (measured: 7e-6 for an option of a few tokens, 3e-5 for a 1,100-token document), within
``LOGPROB`` (1e-4, absolute). The Pile runs with one piece per document (``chunk_words`` above its length), which is
what HELM's one window scores; the suite's own 32-word pieces are compared too
(``test_document_pieces_sum_to_the_whole``): each piece after all the text before it, from the start token.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.envs import REPRODUCIBLE_NUMERICS
from tests.conformance.runner.cases import CASES, ROOT, SERVED_CASES, Case, served
from tests.conformance.runner.model import build, fingerprint
from tests.conformance.runner.server import NAME as SERVED_NAME
from tests.conformance.runner.server import serving

GOLDEN = json.loads((Path(__file__).parent / "golden" / "runner.json").read_text(encoding="utf-8"))
EXACT = 1e-6
LOGPROB = 1e-4
FAMILIES = {"robustness": {"mild_mix"}, "fairness": {"dialect", "gender", "person_name"}}
"""HELM's perturbations per family (``run_expander.py``'s ROBUSTNESS_ and FAIRNESS_PERTURBATION_SPECS), by HELM's names."""
PIECES = "test_language_modeling.py::test_the_pile"
"""The core suite's own Pile test, which cuts each document into 32-word pieces."""
GENERATED = ("generation", "multiple_choice_joint")
"""The methods whose answer is generated text (one request per instance)."""
ACCURACY = ("exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "exact_match_indicator")
OPEN_ENDED = ("f1_score", "rouge_l", "bleu_1", "bleu_4")
"""HELM's reference metrics beyond accuracy, where its run spec asks for them (``get_f1_metric_specs``: F1;
``get_open_ended_generation_metric_specs``: all four); per instance, and their worst cases."""
CLASSIFICATION = ("classification_macro_f1", "classification_micro_f1")
"""HELM's ``ClassificationMetric`` (IMDB, CivilComments): over the run only, no worst case."""

pytestmark = pytest.mark.slow
pytest.importorskip("transformers", reason="the runner golden's model needs torch and transformers (the [test] extra)")

HELM_NAMES = {"gender_pronouns": "gender"}
"""Project perturbation labels whose HELM perturbation has another name (HELM's ``GenderPerturbation.name``)."""


def unchanged(name: str, key: str) -> bool:
    """Whether HELM's perturbed variant ``key`` is its original unchanged (same input text).

    HELM means to drop those (``should_skip_unchanged_eval``), but its ``Processor`` compares ``Input`` objects, and
    a scenario whose instances hold a ``PassageQuestionInput`` (BoolQ, the reading-comprehension scenarios) never
    equals the plain ``Input`` a perturbation returns, so HELM keeps them; the project drops them.
    """
    instances = GOLDEN["cases"][name]["instances"]
    entry = instances[key]
    return entry["perturbation"] is not None and entry["input"] == instances[entry["id"]]["input"]


def _pairs(kept: bool) -> list[Any]:
    return [
        pytest.param(name, key, id=f"{name}-{key}")
        for name, case in sorted(GOLDEN["cases"].items())
        for key in case["instances"]
        if unchanged(name, key) != kept
    ]


PAIRS = _pairs(kept=True)
UNCHANGED = _pairs(kept=False)


@pytest.fixture(scope="session")
def runner_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden's model, rebuilt once per session; a rebuild that drifts stops every comparison with one message."""
    folder = build(tmp_path_factory.mktemp("runner-model"))
    assert fingerprint(folder) == GOLDEN["model"]["weights"], (
        "the tiny model's weights differ from the ones the golden was made with "
        f"(torch {GOLDEN['produced_by']['torch']}); regenerate with {GOLDEN['regenerate']}"
    )
    return folder


CASE_OF: dict[str, Case] = {case.name: case for case in CASES} | {served(case.name): case for case in CASES}
"""Each golden case's runner case (a served case's is the in-process one's)."""


def _pytest_run(cases: Sequence[Case], model: str, suite: Path, reports: Path, *extra_targets: str) -> dict[str, Any]:
    """One pytest run of the core suite's files on ``cases``' rows against ``model``; its runs by test name."""
    (suite / "data").mkdir()
    targets: dict[str, None] = {}
    rows: dict[str, dict[str, None]] = {}
    for case in cases:
        copy = suite / case.suite
        if not copy.exists():
            shutil.copyfile(ROOT / "suites" / "core" / case.suite, copy)
        if case.extra and case.extra not in copy.read_text(encoding="utf-8"):
            copy.write_text(copy.read_text(encoding="utf-8") + case.extra, encoding="utf-8")
        # cases sharing a data file (MMLU's subjects, NaturalQuestions' two modes) read the union of their rows
        if case.data is not None:
            rows.setdefault(case.data, {}).update(dict.fromkeys(json.dumps(row) for row in case.kept()))
        targets[f"{case.suite}::{case.test}"] = None
    for data, lines in rows.items():
        (suite / "data" / data).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--model", model,
        "--holistic-report-dir", str(reports), "--holistic-no-cache", "--holistic-helm-shots", *targets, *extra_targets,
    ]  # fmt: skip
    # A run of its own: nothing of this session's pytest (an xdist worker's variables, PYTEST_ADDOPTS) reaches it.
    ours = ("PYTEST_XDIST", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST", "PYTEST_VERSION")
    env = {key: value for key, value in os.environ.items() if not key.startswith(ours)} | REPRODUCIBLE_NUMERICS
    # ... and with the numerics HELM's run had when the golden was made (torch's AVX2 kernels, one thread): the same
    # log-probabilities to the last bit on any machine, so the golden's 1e-6 comparisons hold on AVX-512 machines too
    done = subprocess.run(command, cwd=suite, env=env, capture_output=True, text=True, timeout=600)
    # 1: a suite's own assertion or gate failed on the tiny model, which says nothing about agreeing with HELM.
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    (report,) = reports.glob("*/latest/report.json")
    payload = json.loads(report.read_text(encoding="utf-8"))
    assert payload["complete"], done.stdout[-3000:]
    return {run["key"].split("::")[-1]: run for run in payload["runs"]}


def _records(name: str, run: Mapping[str, Any]) -> dict[str, Any]:
    """A pytest run's records keyed as the golden case ``name`` keys HELM's instances (``id`` or ``id@perturbation``)."""
    golden = GOLDEN["cases"][name]["instances"]
    by_text = {entry["input"]: entry["id"] for entry in golden.values() if entry["perturbation"] is None}
    # The suites perturb by default; HELM's run entry asks for perturbations only where the case names them.
    kept = {None} | {entry["perturbation"] for entry in golden.values()}
    group = CASE_OF[name].group
    records: dict[str, Any] = {"__run__": run}
    for record in run["instances"]:
        if group is not None and record["instance"]["group"] != group:
            continue
        helm_id = record["instance"].get("helm_id") or by_text.get(record["instance"]["input"])
        label = HELM_NAMES.get(record["perturbation"], record["perturbation"])
        if label not in kept or helm_id is None:
            continue
        records[helm_id + (f"@{label}" if label else "")] = record
    return records


@pytest.fixture(scope="session")
def project_run(runner_model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, Any]]]:
    """Every golden case's records, keyed like the golden: one pytest run of the core suite's files on the cases' rows
    with the model loaded in-process, one with the served cases' files against the same model behind ``server.py``."""
    mktemp = tmp_path_factory.mktemp
    runs = _pytest_run(CASES, str(runner_model), mktemp("runner-suite"), mktemp("runner-reports"), PIECES)
    out = {case.name: _records(case.name, runs[case.test]) for case in CASES}
    out[PIECES] = runs[PIECES.split("::")[1]]
    serving_cases = [case for case in CASES if case.name in SERVED_CASES]
    with serving(runner_model) as url:
        runs = _pytest_run(serving_cases, f"openai:{url}#{SERVED_NAME}", mktemp("served-suite"), mktemp("served-reports"))
    out |= {served(case.name): _records(served(case.name), runs[case.test]) for case in serving_cases}
    return out


@pytest.fixture(scope="session")
def tokenizer(runner_model: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(runner_model))


def _record(project_run: Mapping[str, Any], name: str, key: str) -> dict[str, Any]:
    record = project_run[name].get(key)
    assert record is not None, f"{name}: HELM's instance {key} has no pytest record with that helm_id"
    return dict(record)


def _prompt(name: str, request: Mapping[str, Any]) -> str:
    """A HELM request's whole prompt: the golden keeps the prefix every prompt of a run shares once, per case."""
    return str(GOLDEN["cases"][name]["prompt_prefix"]) + str(request["prompt"])


def _method(name: str) -> str:
    return str(GOLDEN["cases"][name]["adapter_spec"]["method"])


@pytest.mark.parametrize("name", sorted(GOLDEN["cases"]))
def test_same_instances(name: str, project_run: Mapping[str, Any]) -> None:
    """HELM's run and pytest's evaluate the same instances and perturbed variants."""
    ours = {key for key in project_run[name] if key != "__run__"}
    assert ours == {key for key in GOLDEN["cases"][name]["instances"] if not unchanged(name, key)}


@pytest.mark.parametrize(("name", "key"), UNCHANGED)
def test_helm_keeps_unchanged_variants(name: str, key: str, project_run: Mapping[str, Any]) -> None:
    """A variant HELM keeps though its perturbation changed nothing (see ``unchanged``): the project has no record of
    it, and in HELM it is its original again (same prompt, answer and accuracy), so every worst case is the same."""
    instances = GOLDEN["cases"][name]["instances"]
    variant, original = instances[key], instances[instances[key]["id"]]
    assert key not in project_run[name]
    assert [(r["prompt"], r["text"]) for r in variant["requests"]] == [(r["prompt"], r["text"]) for r in original["requests"]]

    def accuracy(entry: Mapping[str, Any]) -> dict[str, float]:
        return {stat.split("@")[0]: value["mean"] for stat, value in entry["stats"].items() if "exact_match" in stat}

    assert accuracy(variant) == accuracy(original)


@pytest.mark.parametrize(("name", "key"), PAIRS)
def test_instance_text(name: str, key: str, project_run: Mapping[str, Any]) -> None:
    """The instance as HELM's scenario class built it from the same row, perturbed as HELM perturbed it."""
    helm, record = GOLDEN["cases"][name]["instances"][key], _record(project_run, name, key)
    assert record["instance"]["input"] == helm["input"]
    references = [[ref["text"], ref["correct"]] for ref in record["instance"]["references"]]
    if _method(name) == "generation":
        # The project lists a yes/no task's other label as a wrong reference; HELM keeps only the correct one.
        references = [ref for ref in references if ref[1]]
    assert references == helm["references"]


@pytest.mark.parametrize(("name", "key"), PAIRS)
def test_prompt(name: str, key: str, project_run: Mapping[str, Any]) -> None:
    """Every prompt HELM sent for the instance is the one pytest sent."""
    helm, record = GOLDEN["cases"][name]["instances"][key], _record(project_run, name, key)
    method = _method(name)
    if method in GENERATED:
        (request,) = helm["requests"]
        assert record["prompt"] == _prompt(name, request)
    elif method.startswith("multiple_choice_separate"):
        # The record keeps the context; each option's request appends the output prefix and the option.
        prefix = GOLDEN["cases"][name]["adapter_spec"]["output_prefix"]
        originals = [_prompt(name, r) for r in helm["requests"] if r["mode"] == "original"]
        assert originals == [record["prompt"] + prefix + choice for choice in record["completion"]["choices"]]
    else:  # language_modeling: one window holds the whole document; HELM's starts with the end-of-text token
        (request,) = helm["requests"]
        assert _prompt(name, request) == "<|endoftext|>" + record["prompt"]


@pytest.mark.parametrize(("name", "key"), PAIRS)
def test_answer(name: str, key: str, project_run: Mapping[str, Any], tokenizer: Any) -> None:
    """The same answer: the generated text (HELM's metrics read it stripped, as the project records it), or per
    option the same score (HELM's ``compute_logprob_and_length``: the last tokens of `` {option}``)."""
    helm, record = GOLDEN["cases"][name]["instances"][key], _record(project_run, name, key)
    method, completion = _method(name), record["completion"]
    if method in GENERATED:
        (request,) = helm["requests"]
        assert completion["text"] == request["text"].strip()
        assert completion["tokens_out"] == len(request["token_logprobs"])
    elif method.startswith("multiple_choice_separate"):
        choices = completion["choices"]
        lengths = [len(tokenizer.tokenize(f" {choice}")) for choice in choices]
        by_mode = {(r["mode"], r["reference_index"]): r for r in helm["requests"]}
        logprobs = [sum(by_mode["original", i]["token_logprobs"][-n:]) for i, n in enumerate(lengths)]
        assert completion["choice_logprobs"] == pytest.approx(logprobs, abs=LOGPROB)
        if method.endswith("calibrated"):
            unconditional = [sum(by_mode["calibration", i]["token_logprobs"][-n:]) for i, n in enumerate(lengths)]
            helm_scores = [lp - alone for lp, alone in zip(logprobs, unconditional)]
        else:
            helm_scores = [lp / n for lp, n in zip(logprobs, lengths)]
        assert completion["choice_scores"] == pytest.approx(helm_scores, abs=LOGPROB)
    else:
        (request,) = helm["requests"]
        assert completion["logprob"] == pytest.approx(request["logprob"], abs=LOGPROB)


@pytest.mark.parametrize(("name", "key"), PAIRS)
def test_instance_stats(name: str, key: str, project_run: Mapping[str, Any]) -> None:
    """HELM's per-instance stats (accuracy, prompt length; for documents their bytes) are pytest's."""
    helm, record = GOLDEN["cases"][name]["instances"][key], _record(project_run, name, key)
    # "test/exact_match@mild_mix#toxic": CivilComments' per-instance stats carry the sub-split (toxic or not) alone
    stats = {stat.split("/", 1)[1].split("@")[0].split("#")[0]: value["mean"] for stat, value in helm["stats"].items()}
    if _method(name) == "language_modeling":
        assert record["completion"]["num_bytes"] == stats["num_bytes"]
        return
    compared = {metric: record["scores"].get(metric) for metric in (*ACCURACY, *OPEN_ENDED) if metric in stats}
    assert compared == pytest.approx({metric: stats[metric] for metric in compared}, abs=EXACT)
    assert compared, f"HELM computed none of {ACCURACY}"
    if _method(name) in GENERATED:
        assert record["completion"]["tokens_in"] == stats["num_prompt_tokens"]
    else:  # the option chosen, and its probability among the options (HELM's softmax over the options' scores)
        assert record["completion"]["predicted_index"] == stats["predicted_index"]
        assert record["completion"]["probability"] == pytest.approx(stats["max_prob"], abs=LOGPROB)


def _run_numbers(name: str, project_run: Mapping[str, Any]) -> dict[str, float]:
    """The pytest run's numbers for case ``name``: the run's own, or, where the run holds other groups too (the suite
    runs every MMLU subject, HELM one), the per-group means of the case's group over its originals."""
    run, group = project_run[name]["__run__"], CASE_OF[name].group
    if group is None or {record["instance"]["group"] for record in run["instances"]} == {group}:
        return {metric: result["value"] for metric, result in run["metrics"].items()}
    return {entry["metric"]: entry["groups"][group]["mean"] for entry in run["groups"]}


def merge_sub_splits(stats: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """HELM's run-level numbers: a run whose instances carry a sub-split (CivilComments: toxic, non-toxic) has its
    stats per sub-split only, and HELM's summary merges them, weighted by count (``presentation/summarize.py``,
    ``get_unique_stat_by_matcher``). For a mean over instances that is the run's mean, which pytest reports.

    A population metric is left out of the merge: HELM's classification F1s are one number per sub-split, each over
    comments of one gold label, and their merge is their plain mean, not the run's F1 (pytest's); the difference
    is the CivilComments row of docs/reference/helm-differences.md, not compared here."""
    out = {key: value["mean"] for key, value in stats.items() if "#" not in key}
    merged: dict[str, list[float]] = {}
    for key, value in stats.items():
        base = key.split("#")[0]
        if "#" in key and base not in out and base.split("/", 1)[1].split("@")[0] not in CLASSIFICATION:
            total = merged.setdefault(base, [0.0, 0.0])
            total[0] += value["mean"] * value["count"]
            total[1] += value["count"]
    return out | {key: total / count for key, (total, count) in merged.items()}


@pytest.mark.parametrize("name", sorted(GOLDEN["cases"]))
def test_aggregates(name: str, project_run: Mapping[str, Any]) -> None:
    """The run's accuracy, its worst case under robustness, and for documents bits per byte: HELM's numbers."""
    case, metrics = GOLDEN["cases"][name], _run_numbers(name, project_run)
    split = next(iter(case["instances"].values()))["split"]
    stats = merge_sub_splits(case["stats"])
    if _method(name) == "language_modeling":
        assert metrics["bits_per_byte"] == pytest.approx(stats[f"{split}/bits_per_byte"], abs=EXACT)
        # exp(-log-probability / tokens) over the run: the tokens are counted alike
        assert metrics["perplexity"] == pytest.approx(stats[f"{split}/perplexity"], rel=EXACT)
        return
    ran = {entry["perturbation"] for entry in case["instances"].values()}
    compared = {}
    for metric in (*ACCURACY, *OPEN_ENDED, *CLASSIFICATION):
        if f"{split}/{metric}" not in stats:  # HELM's separate methods compute exact_match alone
            continue
        compared[metric] = (metrics[metric], stats[f"{split}/{metric}"])
        if metric in CLASSIFICATION:
            continue  # population metrics: HELM has no worst case of them
        for family, members in FAMILIES.items():  # the worst case over the original and the family's variants
            if ran & members:
                worst = stats[f"{split}/{metric}@{family}:worst"]
                compared[f"{family}.{metric}"] = (metrics[f"{family}.{metric}"], worst)
    assert compared, f"HELM computed none of {ACCURACY}"
    wrong = {metric: pair for metric, pair in compared.items() if not math.isclose(*pair, abs_tol=EXACT)}
    assert not wrong, f"(pytest, HELM): {wrong}"


IN_PROCESS = [name for name in sorted(GOLDEN["cases"]) if name not in {served(n) for n in SERVED_CASES}]
SERVED = sorted(served(name) for name in SERVED_CASES)
HELM_CALIBRATION = {
    "ece_10_bin": "ece_10_bin",
    "ece_1_bin": "ece_1_bin",
    "selective_acc_at_10": "selective_acc@10",
    "selective_cov_acc_area": "selective_cov_acc_area",
    "platt_ece_10_bin": "platt_ece_10_bin",
}
"""The suites' calibration metrics (``metrics.CALIBRATION``) and HELM's names for them (``compute_calibration_metrics``)."""
PLATT = 2e-3
"""HELM fits Platt scaling with scikit-learn's L-BFGS, the project with its own Newton steps to a tighter optimum
(``test_helm_metrics.py``: at least as good a fit); the rescaled ECE then differs in its third decimal at most."""


@pytest.mark.parametrize("name", [name for name in SERVED if _method(name) in GENERATED])
def test_served_answer_probability(name: str, project_run: Mapping[str, Any]) -> None:
    """Per instance, the answer's log-probability both runners read from the server's tokens (each cut where its
    text ends: HELM drops the tokens from the one that starts with a stop sequence) and HELM's ``max_prob``."""
    for key, helm in GOLDEN["cases"][name]["instances"].items():
        if unchanged(name, key):
            continue
        record, (request,) = _record(project_run, name, key), helm["requests"]
        stats = {stat.split("/", 1)[1]: value["mean"] for stat, value in helm["stats"].items()}
        assert record["completion"]["logprob"] == pytest.approx(request["logprob"], abs=EXACT), key
        assert record["completion"]["probability"] == pytest.approx(stats[next(s for s in stats if s.startswith("max_prob"))], abs=EXACT), key


@pytest.mark.parametrize("name", SERVED)
def test_served_calibration(name: str, project_run: Mapping[str, Any]) -> None:
    """The run's calibration numbers are HELM's where HELM computes them: on a generated answer's probability (the
    generation and joint runs). HELM 0.5.16 computes none for the separate methods (its guard looks for a generated
    answer's ``logprob`` stat, which those runs never have), where the suites report them from the softmax over the
    options, HELM's own ``max_prob``; nor for a run whose metrics leave out exact_match (Dyck), where the suites read
    correctness as exact match. Both are a row of the table in docs/reference/helm-differences.md."""
    case, metrics = GOLDEN["cases"][name], project_run[name]["__run__"]["metrics"]
    split = next(iter(case["instances"].values()))["split"]
    stats = case["stats"]
    ours = [metric for metric in HELM_CALIBRATION if metric in metrics]
    assert ours, "the suite's run computed no calibration"
    if _method(name) not in GENERATED or f"{split}/exact_match" not in stats:
        # HELM's calibration reads each instance's exact_match: a run without one (Dyck's run spec asks for
        # exact_match_indicator only) gets none, as the separate methods get none
        assert not [stat for stat in stats if "ece" in stat], f"HELM computed calibration on {name}"
        return
    compared = {metric: (metrics[metric]["value"], stats[f"{split}/{HELM_CALIBRATION[metric]}"]["mean"]) for metric in ours}
    wrong = {
        metric: pair
        for metric, pair in compared.items()
        if not math.isclose(*pair, abs_tol=PLATT if metric.startswith("platt") else EXACT)
    }
    assert not wrong, f"(pytest, HELM): {wrong}"


@pytest.mark.parametrize("name", [name for name in IN_PROCESS if _method(name) in GENERATED])
def test_helm_client_reports_no_generated_logprobs(name: str, project_run: Mapping[str, Any]) -> None:
    """Why these runs compare no calibration number (the served runs do): HELM's own client has none to give.

    For temperature 0 ``HuggingFaceClient`` samples at temperature 1e-7 and reads each generated token's log-probability
    from the scores after that temperature, so every one is 0.0; ``compute_calibration_metrics`` then skips the run
    ("logprobs were not available") and its max_prob is 1. The project's are the model's own.
    """
    case = GOLDEN["cases"][name]
    assert {lp for entry in case["instances"].values() for r in entry["requests"] for lp in r["token_logprobs"]} == {0.0}
    assert not [stat for stat in case["stats"] if "ece" in stat]
    answered = [record["completion"] for key, record in project_run[name].items() if key != "__run__"]
    assert answered and all(completion["logprob"] < 0 for completion in answered if completion["tokens_out"])


def test_document_pieces_sum_to_the_whole(project_run: Mapping[str, Any]) -> None:
    """The suite's 32-word pieces, each scored after the start token and all the text before it, add up to HELM's one
    window (the same tokens: this tokenizer cuts the pieces where it cuts the whole document)."""
    helm = {entry["input"]: entry["requests"][0]["logprob"] for entry in GOLDEN["cases"]["the_pile"]["instances"].values()}
    ours = {record["instance"]["input"]: record["completion"]["logprob"] for record in project_run[PIECES]["instances"]}
    assert ours == pytest.approx(helm, abs=LOGPROB)


def test_golden_cases_are_the_runner_cases() -> None:
    """The committed golden was made from the cases this test runs (a changed case needs a regenerated golden)."""
    expected = {case.name: (case.entry, {str(k): v for k, v in case.rows.items()}) for case in CASES}
    expected |= {served(name): expected[name] for name in SERVED_CASES}
    assert {name: (case["entry"], case["rows"]) for name, case in GOLDEN["cases"].items()} == expected
