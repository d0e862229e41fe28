"""Inputs of the ``prompts`` section: the core suite's own instances, and adapter specs with varied field values.

Two kinds of case, each carrying HELM instances (``id``, ``input``, ``references`` with ``correct`` flags, HELM's
split name ``train``/``test`` and the project's ``group``):

- ``suite``: one test function of ``suites/core`` or ``suites/lite`` and the HELM run-spec function (with arguments) that defines the
  same scenario. The oracle adapts the suite's shipped instances with HELM's own spec, once with HELM's number of
  in-context examples and once with the offline edition's (``local_max_train_instances``); per-group suites (MMLU's
  subjects, CivilComments' demographics) are adapted one group at a time, as HELM runs them.
- ``varied``: a seeded adapter spec (every field HELM's prompt layout reads, quirky values included) and seeded
  instances, for every method the project offers; HELM's ``AdapterSpec`` takes the fields as they are.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

from pytest_holistic.scenarios.helm_rows_mc import RAFT_SUBSETS

ROOT = Path(__file__).resolve().parents[3]
SUITES = ROOT / "suites"
EVALUATED_PER_GROUP = 3
"""Evaluated instances kept per scenario (per group in a per-group suite): enough to cover each layout."""

SUITE_CASES: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    ("core/test_natural_qa.py", "test_natural_qa_openbook_longans", "get_natural_qa_spec", {"mode": "openbook_longans"}),
    ("core/test_natural_qa.py", "test_natural_qa_closedbook", "get_natural_qa_spec", {"mode": "closedbook"}),
    ("core/test_narrative_qa.py", "test_narrative_qa", "get_narrativeqa_spec", {}),
    ("core/test_quac.py", "test_quac", "get_quac_spec", {}),
    ("core/test_boolq.py", "test_boolq", "get_boolq_spec", {}),
    (
        "core/test_hellaswag.py",
        "test_hellaswag",
        "get_commonsense_spec",
        {"dataset": "hellaswag", "method": "multiple_choice_separate_original"},
    ),
    (
        "core/test_openbookqa.py",
        "test_openbookqa",
        "get_commonsense_spec",
        {"dataset": "openbookqa", "method": "multiple_choice_joint"},
    ),
    (
        "core/test_truthfulqa.py",
        "test_truthfulqa",
        "get_truthful_qa_spec",
        {"task": "mc_single", "method": "multiple_choice_joint"},
    ),
    ("core/test_mmlu.py", "test_mmlu", "get_mmlu_spec", {"subject": "{group}"}),
    ("core/test_msmarco.py", "test_msmarco_regular", "get_msmarco_spec", {"track": "regular"}),
    ("core/test_msmarco.py", "test_msmarco_trec", "get_msmarco_spec", {"track": "trec"}),
    ("core/test_cnn_dailymail.py", "test_cnn_dailymail", "get_cnndm_summarization_spec", {}),
    ("core/test_xsum.py", "test_xsum", "get_xsum_summarization_spec", {}),
    ("core/test_imdb.py", "test_imdb", "get_imdb_spec", {}),
    ("core/test_civil_comments.py", "test_civil_comments", "get_civil_comments_spec", {"demographic": "{group}"}),
    *(("core/test_raft.py", f"test_raft_{subset}", "get_raft_spec", {"subset": subset}) for subset in RAFT_SUBSETS),
    ("core/test_synthetic_reasoning.py", "test_pattern_match", "get_synthetic_reasoning_spec", {"mode": "pattern_match"}),
    (
        "core/test_synthetic_reasoning.py",
        "test_variable_substitution",
        "get_synthetic_reasoning_spec",
        {"mode": "variable_substitution"},
    ),
    ("core/test_synthetic_reasoning.py", "test_induction", "get_synthetic_reasoning_spec", {"mode": "induction"}),
    ("core/test_dyck.py", "test_dyck", "get_dyck_language_spec", {"num_parenthesis_pairs": 3}),
    ("core/test_bbq.py", "test_bbq", "get_bbq_spec", {"subject": "all"}),
    (
        "core/test_memorisation.py",
        "test_memorisation",
        "get_copyright_spec",
        {"datatag": "n_books_1000-extractions_per_book_1-prefix_length_125"},
    ),
    ("core/test_toxicity.py", "test_toxicity_prompts", "get_real_toxicity_prompts_spec", {}),
    # HELM Lite (run_entries_lite_20240424.conf)
    ("lite/test_narrative_qa.py", "test_narrative_qa", "get_narrativeqa_spec", {}),
    ("lite/test_natural_qa.py", "test_natural_qa_openbook_longans", "get_natural_qa_spec", {"mode": "openbook_longans"}),
    ("lite/test_natural_qa.py", "test_natural_qa_closedbook", "get_natural_qa_spec", {"mode": "closedbook"}),
    (
        "lite/test_openbookqa.py",
        "test_openbookqa",
        "get_commonsense_spec",
        {"dataset": "openbookqa", "method": "multiple_choice_joint"},
    ),
    ("lite/test_mmlu.py", "test_mmlu", "get_mmlu_spec", {"subject": "{group}"}),
    ("lite/test_gsm8k.py", "test_gsm8k", "get_gsm_spec", {}),
    (
        "lite/test_math.py",
        "test_math",
        "get_math_spec",
        {"subject": "{group}", "level": "1", "use_chain_of_thought": "True"},
    ),
    ("lite/test_med_qa.py", "test_med_qa", "get_med_qa_spec", {}),
    *(
        ("lite/test_wmt14.py", f"test_wmt14_{language}_en", "get_wmt_14_spec", {"language_pair": f"{language}-en"})
        for language in ("cs", "de", "fr", "hi", "ru")
    ),
    *(
        ("lite/test_legalbench.py", f"test_legalbench_{task}", "get_legalbench_spec", {"subset": task})
        for task in (
            "abercrombie",
            "corporate_lobbying",
            "international_citizenship_questions",
            "function_of_decision_section",
            "proa",
        )
    ),
)
"""(suite file, test function, HELM run-spec function, its arguments; ``{group}`` is filled per group)."""


def load_suite(file: str) -> Any:
    """A suite module (``file`` relative to ``suites/``) imported by path, once per process."""
    name = "holistic_conformance_suite_" + file.removesuffix(".py").replace("/", "_")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SUITES / file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def marker_of(file: str, test: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The positional and keyword arguments of the ``holistic`` marker on a suite's test function."""
    function = getattr(load_suite(file), test)
    marks = [mark for mark in getattr(function, "pytestmark", ()) if mark.name == "holistic"]
    if len(marks) != 1:
        raise LookupError(f"{file}::{test} has {len(marks)} holistic markers")
    return marks[0].args, dict(marks[0].kwargs)


def helm_instance(instance: Any, split: str) -> dict[str, Any]:
    return {
        "id": instance.id,
        "input": instance.input,
        "references": [{"text": reference.text, "correct": reference.correct} for reference in instance.references],
        "split": split,
        "group": instance.group,
    }


def suite_case(file: str, test: str, function: str, arguments: dict[str, Any]) -> dict[str, Any]:
    args, kwargs = marker_of(file, test)
    scenario = kwargs.get("scenario") or args[0]
    loaded = scenario.load("local", (SUITES / file).parent)
    evaluated = loaded.split(kwargs.get("split", scenario.split))
    kept: list[Any] = []
    per_group: dict[str | None, int] = {}
    for instance in evaluated:
        if per_group.get(instance.group, 0) < EVALUATED_PER_GROUP:
            per_group[instance.group] = per_group.get(instance.group, 0) + 1
            kept.append(instance)
    return {
        "kind": "suite",
        "suite": file,
        "test": test,
        "helm": {"function": function, "arguments": arguments},
        "per_group": "{group}" in arguments.values() or bool(kwargs.get("per_group")),
        "local_max_train_instances": kwargs.get("local_max_train_instances"),
        "instances": [helm_instance(i, "train") for i in loaded.split(scenario.train_split)]
        + [helm_instance(i, "test") for i in kept],
    }


# -- varied field values ------------------------------------------------------------------------------

FIELD_VALUES: dict[str, tuple[Any, ...]] = {
    "instructions": ("", "Answer the questions.\n", "Answer.", "Two lines\nof instructions\n", "  padded  \n"),
    "global_prefix": ("", "", "<s>"),
    "global_suffix": ("", "", " [end]"),
    "input_prefix": ("", "Question: ", "Q:\n", "###\nArticle: "),
    "input_suffix": ("\n", "", "\n\n", " "),
    "reference_prefix": ("A. ", "(a) ", "1) ", " A: ", "Option A. ", "[x] "),
    "reference_suffix": ("\n", " ", "; "),
    "output_prefix": ("Answer: ", "Answer:", "A:\n", "", " ", "Summarize it in 1 sentence.\n", "Label:  \t"),
    "output_suffix": ("\n", "", "\n\n"),
    "instance_prefix": ("\n", "", "\n\n", "---\n"),
    "max_train_instances": (0, 1, 2, 3, 5),
    "sample_train": (True, True, False),
    "multi_label": (False, False, True),
}
METHODS = (
    "generation",
    "multiple_choice_joint",
    "multiple_choice_separate_original",
    "multiple_choice_separate_calibrated",
    "ranking_binary",
)
LABELS = ("yes", "no", "maybe", "", " spaced ", "Ünïcode")
WORDS = "the cat sat on a mat while rain fell over old stone walls and nobody came home".split()  # noqa: SIM905


def _text(rng: random.Random, low: int = 1, high: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def _instance(rng: random.Random, index: int, split: str, method: str) -> dict[str, Any]:
    if method == "ranking_binary":
        count = 2 if split == "train" else rng.randint(2, 4)
        texts = [_text(rng, 3, 9) for _ in range(count)]
        correct = [k == (0 if split == "train" else rng.randrange(count)) for k in range(count)]
        if split == "train" and rng.random() < 0.5:
            texts.reverse()
            correct.reverse()
    elif method == "generation":
        texts = [rng.choice(LABELS) for _ in range(rng.randint(1, 3))]
        correct = [rng.random() < 0.7 for _ in texts]
    else:
        texts = [rng.choice((_text(rng, 1, 3), *LABELS)) for _ in range(rng.randint(2, 5))]
        correct = [False] * len(texts)
        if rng.random() < 0.9:
            correct[rng.randrange(len(texts))] = True
        if rng.random() < 0.2:
            correct[rng.randrange(len(texts))] = True
    return {
        "id": f"{split}-{index}",
        "input": _text(rng, 0, 10) + rng.choice(("", "?", "\n", "  ")),
        "references": [{"text": text, "correct": flag} for text, flag in zip(texts, correct, strict=True)],
        "split": split,
        "group": None,
    }


def varied_case(number: int) -> dict[str, Any]:
    rng = random.Random(f"prompts-varied-{number}")
    method = METHODS[number % len(METHODS)]
    spec = {name: rng.choice(values) for name, values in FIELD_VALUES.items()}
    if method == "ranking_binary":
        spec["max_train_instances"] = rng.choice((0, 1, 2))  # HELM's ranking spec holds training queries, not blocks
    trials = 2 if rng.random() < 0.3 else 1
    train = [_instance(rng, k, "train", method) for k in range(rng.randint(0, 8))]
    evaluated = [_instance(rng, k, "test", method) for k in range(2)]
    return {
        "kind": "varied",
        "name": f"varied-{number:03d}-{method}",
        "spec": {"method": method, "num_train_trials": trials, **spec},
        "instances": train + evaluated,
    }


VARIED = 60


def build(files: Path) -> dict[str, Any]:
    cases = [suite_case(*case) for case in SUITE_CASES]
    cases += [varied_case(number) for number in range(VARIED)]
    # HELM downloads RAFT's instructions; its spec is given the suite's own, so the layout is what is compared. The run
    # spec adds the newline that ends them, which the suite's value already holds.
    raft = {
        test: marker_of(file, test)[1]["instructions"].removesuffix("\n")
        for file, test, function, _ in SUITE_CASES
        if function == "get_raft_spec"
    }
    # HELM downloads LegalBench's settings too: its spec is given each task's instructions and output noun from the suite.
    legalbench = {
        arguments["subset"]: {
            "instructions": marker_of(file, test)[1]["instructions"].removesuffix("\n"),
            "output_noun": marker_of(file, test)[1]["output_prefix"].removesuffix(": "),
        }
        for file, test, function, arguments in SUITE_CASES
        if function == "get_legalbench_spec"
    }
    return {"cases": cases, "raft_instructions": raft, "legalbench_settings": legalbench}
