"""pytest-holistic's whole run against HELM 0.5.16's whole ``helm-run``, instance by instance (``golden/runner.json``).

The golden is what ``helm-run`` produced (``tests/conformance/runner/generate.py``: HELM's scenario classes reading
the offline rows written where they download, its run specs, ``HuggingFaceClient`` and metrics) on a tiny GPT-2
committed in ``runner/model_files`` (``runner/model.py`` says why it is not trained here). Here the same model's
folder is built from those files, the core suite's own files run on the
same rows in a pytest subprocess, and each record of ``report.json`` is matched with HELM's instance by
``Instance.helm_id`` (The Pile's documents, which HELM numbers by position and the suite does not, by their text).
The served cases run again with the same model behind ``runner/server.py``, an OpenAI-compatible server: HELM through
its ``OpenAILegacyCompletionsClient``, pytest through ``openai:``. There the model's answers carry log-probabilities,
so HELM computes calibration, and the runs' calibration numbers are compared too.

Where the numbers come from: HELM's run was made once, on the golden's pinned numerics (``REPRODUCIBLE_NUMERICS``);
pytest's run here uses the machine's own kernels and threads, as a user's run does, so the comparisons must hold on
machines whose arithmetic differs in the last bits. ``test_runner_kernels.py`` reruns this file under each of torch's
x86-64 kernel families, which stand for other CPUs. The tolerances, and the arithmetic behind each:

- Texts, counts, chosen options and everything computed from them (accuracy, F1, ROUGE-L, BLEU, the classification
  F1s, worst cases): identical, numbers within ``EXACT`` (1e-6: the same sums of the same values in another order).
  A greedy answer or a chosen option changes only if rounding moves a log-probability across the gap between the
  best token (option) and the next; ``test_greedy_answers_are_decided_by_more_than_rounding`` and
  ``test_chosen_options_are_decided_by_more_than_rounding`` check that every gap in the golden is wider than twice
  that movement (measured: the narrowest greedy gap 2.5e-4 nats, the narrowest option gap 0.012).
- A log-probability is a sum of float32 token values. Each token's value moves by at most ``TOKEN_DRIFT`` (1e-5,
  ``tests/float32.py``) between machines (measured over the default, AVX2 and AVX-512 families: 2.0e-6 at most on
  this model, usually far less), and
  HELM sums its float32 values one request at a time where the project batches with padding (7e-6 for an option of
  a few tokens, 3e-5 for a 1,100-token document), so a sum of n tokens is compared within
  ``logprob_tolerance(n)``: ``LOGPROB`` (1e-4) plus n times ``TOKEN_DRIFT``.
- An answer's probability is the exponential of its log-probability, so it moves by no more than that; a binned
  calibration error (a mean of probabilities per bin) moves by no more than the largest probability's movement as
  long as the order of the instances by probability is HELM's, and an ordering metric (selective accuracy, the
  coverage-accuracy area) not at all. ``test_served_calibration`` checks that order first: where this machine's
  rounding swaps two answers whose probabilities HELM's run holds within rounding of each other, HELM's number for
  that order is not in the golden, and the comparison skips in one line.

The Pile runs with one piece per document (``chunk_words`` above its length), which is what HELM's one window scores;
the suite's own 32-word pieces are compared too (``test_document_pieces_sum_to_the_whole``): each piece after all the
text before it, from the start token.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.runner.cases import CASES, ROOT, SERVED_CASES, Case, served
from tests.conformance.runner.model import build, fingerprint
from tests.conformance.runner.server import NAME as SERVED_NAME
from tests.conformance.runner.server import serving
from tests.float32 import TOKEN_DRIFT

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
    """The golden's model, built from the committed files (copies only: the same bits on any machine); weights that
    are not the golden's stop every comparison with one message."""
    folder = build(tmp_path_factory.mktemp("runner-model"))
    assert fingerprint(folder) == GOLDEN["model"]["weights"], (
        "the committed model (tests/conformance/runner/model_files) is not the one the golden was made with; "
        f"regenerate the golden with {GOLDEN['regenerate']}"
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
    # The machine's own numerics (its kernels and threads), not the golden's: what a user's run computes is compared.
    env = {key: value for key, value in os.environ.items() if not key.startswith(ours)}
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
        options = helm_options(name, helm, tokenizer)
        assert [option.text for option in options] == completion["choices"]
        for option, logprob, score in zip(options, completion["choice_logprobs"], completion["choice_scores"]):
            assert logprob == pytest.approx(option.logprob, abs=logprob_tolerance(option.tokens)), option.text
            assert score == pytest.approx(option.score, abs=option.score_tolerance), option.text
    else:
        (request,) = helm["requests"]
        tolerance = logprob_tolerance(len(request["token_logprobs"]))
        assert completion["logprob"] == pytest.approx(request["logprob"], abs=tolerance)


def logprob_tolerance(tokens: int) -> float:
    """How far a log-probability summed over ``tokens`` float32 token values may lie from HELM's (module notes)."""
    return LOGPROB + tokens * TOKEN_DRIFT


@dataclass(frozen=True)
class HelmOption:
    """One option of a separate-method instance as HELM scored it: ``compute_logprob_and_length``'s last ``tokens``
    tokens of `` {option}``, and the score HELM ranks by (the mean per token, or the log-probability less the option's
    own under the calibration prompt)."""

    text: str
    tokens: int
    logprob: float
    score: float
    score_tolerance: float


def helm_options(name: str, entry: Mapping[str, Any], tokenizer: Any) -> list[HelmOption]:
    by_mode = {(r["mode"], r["reference_index"]): r for r in entry["requests"]}
    calibrated = _method(name).endswith("calibrated")
    options = []
    for i, (text, _) in enumerate(entry["references"]):
        n = len(tokenizer.tokenize(f" {text}"))
        logprob = sum(by_mode["original", i]["token_logprobs"][-n:])
        if calibrated:  # two sums of n tokens each
            score, tolerance = logprob - sum(by_mode["calibration", i]["token_logprobs"][-n:]), 2 * logprob_tolerance(n)
        else:
            score, tolerance = logprob / n, logprob_tolerance(n) / n
        options.append(HelmOption(text, n, logprob, score, tolerance))
    return options


@pytest.mark.parametrize(("name", "key"), PAIRS)
def test_instance_stats(name: str, key: str, project_run: Mapping[str, Any], tokenizer: Any) -> None:
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
    else:  # the option chosen, and its probability among the options (HELM's softmax over the options' scores,
        # which moves by no more than the scores do)
        assert record["completion"]["predicted_index"] == stats["predicted_index"]
        tolerance = max(option.score_tolerance for option in helm_options(name, helm, tokenizer))
        assert record["completion"]["probability"] == pytest.approx(stats["max_prob"], abs=tolerance)


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
        # -log-probability / (bytes ln 2) over the run: it moves by TOKEN_DRIFT times tokens per byte (below 1) / ln 2
        assert metrics["bits_per_byte"] == pytest.approx(stats[f"{split}/bits_per_byte"], abs=2 * TOKEN_DRIFT)
        # exp(-log-probability / tokens) over the run, the tokens counted alike: relatively, it moves by TOKEN_DRIFT
        assert metrics["perplexity"] == pytest.approx(stats[f"{split}/perplexity"], rel=TOKEN_DRIFT)
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


def _helm_stat(entry: Mapping[str, Any], name: str) -> float:
    """One per-instance stat of HELM's, by its bare name (``max_prob`` for ``test/max_prob@...``)."""
    return next(v["mean"] for stat, v in entry["stats"].items() if stat.split("/", 1)[1].split("@")[0].split("#")[0] == name)


@pytest.mark.parametrize("name", [name for name in SERVED if _method(name) in GENERATED])
def test_served_answer_probability(name: str, project_run: Mapping[str, Any]) -> None:
    """Per instance, the answer's log-probability both runners read from the server's tokens (each cut where its
    text ends: HELM drops the tokens from the one that starts with a stop sequence) and HELM's ``max_prob``: the same
    token values summed, each moved by at most ``TOKEN_DRIFT`` on this machine's server."""
    for key, helm in GOLDEN["cases"][name]["instances"].items():
        if unchanged(name, key):
            continue
        record, (request,) = _record(project_run, name, key), helm["requests"]
        tolerance = EXACT + len(request["token_logprobs"]) * TOKEN_DRIFT
        assert record["completion"]["logprob"] == pytest.approx(request["logprob"], abs=tolerance), key
        assert record["completion"]["probability"] == pytest.approx(_helm_stat(helm, "max_prob"), abs=tolerance), key


def _order_swaps(name: str, project_run: Mapping[str, Any]) -> tuple[list[tuple[str, str]], float]:
    """The pairs of original instances, one answered right and one wrong, that pytest's probabilities order the other
    way from HELM's; and the largest difference between an instance's two probabilities."""
    points = []
    for key, entry in GOLDEN["cases"][name]["instances"].items():
        if entry["perturbation"] is None:
            ours = _record(project_run, name, key)["completion"]["probability"]
            points.append((key, _helm_stat(entry, "max_prob"), ours, _helm_stat(entry, "exact_match")))
    swaps = [
        (a[0], b[0]) for a in points for b in points if a[3] != b[3] and a[1] < b[1] and a[2] > b[2]
    ]
    return swaps, max(abs(helm - ours) for _, helm, ours, _ in points)


@pytest.mark.parametrize("name", SERVED)
def test_served_calibration(name: str, project_run: Mapping[str, Any]) -> None:
    """The run's calibration numbers are HELM's where HELM computes them: on a generated answer's probability (the
    generation and joint runs). HELM 0.5.16 computes none for the separate methods (its guard looks for a generated
    answer's ``logprob`` stat, which those runs never have), where the suites report them from the softmax over the
    options, HELM's own ``max_prob``; nor for a run whose metrics leave out exact_match (Dyck), where the suites read
    correctness as exact match. Both are a row of the table in docs/reference/helm-differences.md.

    The numbers depend on the instances' order by probability and on each bin's mean probability. With HELM's order
    (no right answer and wrong one swapped), the ordering metrics are equal, and a bin's mean probability moves by at
    most three times the largest probability's movement (each probability's own, and items of the same correctness
    trading bins with near-tied ones, each such pair within twice the movement), so that is the tolerance; Platt
    scaling refits, within ``PLATT``."""
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
    swaps, moved = _order_swaps(name, project_run)
    if swaps:
        instances = case["instances"]
        gaps = {pair: abs(_helm_stat(instances[pair[0]], "max_prob") - _helm_stat(instances[pair[1]], "max_prob")) for pair in swaps}
        assert max(gaps.values()) <= 2 * moved, f"pytest orders these answers unlike HELM beyond rounding: {gaps}"
        pytest.skip(f"{name}: this machine's rounding swaps near-tied answers {swaps[0]} (HELM's order is in the golden, not this one)")
    binned = EXACT + 3 * moved
    tolerance = {"ece_10_bin": binned, "ece_1_bin": binned, "platt_ece_10_bin": PLATT}
    compared = {metric: (metrics[metric]["value"], stats[f"{split}/{HELM_CALIBRATION[metric]}"]["mean"]) for metric in ours}
    wrong = {metric: pair for metric, pair in compared.items() if not math.isclose(*pair, abs_tol=tolerance.get(metric, EXACT))}
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
    documents = GOLDEN["cases"]["the_pile"]["instances"].values()
    helm = {entry["input"]: (entry["requests"][0]["logprob"], len(entry["requests"][0]["token_logprobs"])) for entry in documents}
    ours = {record["instance"]["input"]: record["completion"]["logprob"] for record in project_run[PIECES]["instances"]}
    assert ours.keys() == helm.keys()
    for text, (logprob, tokens) in helm.items():
        assert ours[text] == pytest.approx(logprob, abs=logprob_tolerance(tokens)), text[:40]


def test_golden_cases_are_the_runner_cases() -> None:
    """The committed golden was made from the cases this test runs (a changed case needs a regenerated golden)."""
    expected = {case.name: (case.entry, {str(k): v for k, v in case.rows.items()}) for case in CASES}
    expected |= {served(name): expected[name] for name in SERVED_CASES}
    assert {name: (case["entry"], case["rows"]) for name, case in GOLDEN["cases"].items()} == expected


def test_greedy_answers_are_decided_by_more_than_rounding(runner_model: Path, tokenizer: Any) -> None:
    """Why the texts are compared exactly on any machine: at every step of every answer HELM generated, the greedy
    token beats the next one by more than twice ``TOKEN_DRIFT``, the most rounding moves a token's log-probability, so
    no kernel family can change an answer. Decoded here with transformers' own greedy loop, on this machine's numerics
    (the texts it gives are HELM's, or the gaps would be measured on another path); the served runs ask the same
    model the same prompts."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(runner_model), dtype=torch.float32).eval()
    gaps: dict[str, float] = {}
    for name in IN_PROCESS:
        case = GOLDEN["cases"][name]
        if _method(name) not in GENERATED:
            continue
        for key, entry in case["instances"].items():
            (request,) = entry["requests"]
            prompt = _prompt(name, request)
            if prompt in gaps:
                continue
            ids = tokenizer(prompt, return_tensors="pt")["input_ids"]
            with torch.no_grad():
                out = model.generate(
                    ids, attention_mask=torch.ones_like(ids), max_new_tokens=request["max_tokens"], do_sample=False,
                    output_scores=True, return_dict_in_generate=True, pad_token_id=tokenizer.eos_token_id,
                )  # fmt: skip
            tokens = out.sequences[0, ids.shape[1] :].tolist()
            gap = math.inf
            for step, scores in enumerate(out.scores):  # up to the token that ends the text
                best, second = torch.topk(torch.log_softmax(scores[0].double(), dim=-1), 2).values.tolist()
                gap = min(gap, best - second)
                if tokens[step] == tokenizer.eos_token_id or "\n" in tokenizer.decode(tokens[: step + 1]):
                    break
            text = tokenizer.decode(tokens, skip_special_tokens=True).split("\n")[0]
            assert text.strip() == request["text"].strip(), f"{name} {key}: {text!r} is not HELM's {request['text']!r}"
            gaps[prompt] = gap
    assert len(gaps) > 1000 and min(gaps.values()) > 2 * TOKEN_DRIFT, sorted(gaps.values())[:5]


def test_chosen_options_are_decided_by_more_than_rounding(tokenizer: Any) -> None:
    """Why the chosen option is compared exactly: in every separate-method instance HELM scored, the best option's
    score beats the next one's by more than both scores' tolerances together."""
    narrowest = math.inf
    for name in GOLDEN["cases"]:
        if not _method(name).startswith("multiple_choice_separate"):
            continue
        for entry in GOLDEN["cases"][name]["instances"].values():
            best, second = sorted(helm_options(name, entry, tokenizer), key=lambda option: -option.score)[:2]
            narrowest = min(narrowest, (best.score - second.score) / (best.score_tolerance + second.score_tolerance))
    assert narrowest > 1, f"an option gap is only {narrowest:.2f} times the scores' tolerances"
