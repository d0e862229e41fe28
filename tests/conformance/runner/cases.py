"""The runs the runner golden covers: which offline rows, which suite file, which HELM run entry, HELM's files.

Both runners read the same rows: the offline editions' (``suites/core/data``), whole, except where a case says which
rows make HELM's run (one MMLU subject, one CivilComments demographic). The pytest side runs a copy of the core
suite's own file beside a ``data/`` folder holding those rows; HELM's side finds the same
rows pre-written in the files its scenario class would download (``ensure_file_downloaded`` skips a path that
exists), laid out as HELM's sources have them. The run entries use HELM's run-spec functions unchanged, at HELM's
in-context counts, and so does the pytest run (``--holistic-helm-shots``): both sides make the same run. Only facts
of HELM's file layouts are carried over (scenario classes in helm/benchmark/scenarios/, HELM 0.5.16).

Not covered: ranking. HELM's ``MSMARCOScenario`` reads a BM25 run: a training query needs 20 ranked passages with a
wrong one ranked 11 to 20, a validation query at least ``valid_topk`` of them (11 or more, ``MIN_TOPK``; without it,
only its judged passages, i.e. the gold ones), while the offline rows hold the 7 passages Bing returned per query; writing them as HELM's files would mean inventing passages, so the two runs would not be
the same run. (The project's ranking also scores ``Yes``/``No`` where HELM generates: docs/reference/helm-differences.md.)

Not covered: summarization (XSum, CNN/DailyMail). HELM's ``SummarizationMetric.__init__`` (metrics/
summarization_metrics.py) downloads spaCy's ``en_core_web_sm`` when it is not installed and imports summ_eval's
``DataStatsMetric``, and its run specs sample at temperature 0.3 where the project decodes greedily (docs/reference/helm-differences.md), so the
answers would differ even with the model in place.

Not covered: RAFT. ``get_raft_spec`` builds its instructions from a settings file HELM downloads, and
``RAFTScenario`` reads ``ought/raft`` with ``datasets.load_dataset`` (the hub; stubbed in this environment); the
project's instructions and field order are its own (docs/reference/helm-differences.md, "RAFT"), so the prompts would not be HELM's.

Not covered: the toxicity prompts. HELM's ``real_toxicity_prompts`` run scores completions with the Perspective API
(network, a key) and samples five completions at temperature 0.9.

Not covered: BBQ. The suite's BBQ questions are the project's own, generated from templates and split by the suite
(12 in-context, 20 evaluated); HELM shuffles every row with ``random.seed(0)`` and keeps the last 1000 as its test
split, so with fewer rows it has no training rows at all and the two runs differ by construction. The scenario
golden compares BBQ's row-to-instance rules and the metric golden ``BBQMetric``.

Not covered: synthetic reasoning. HELM evaluates a sample of 1000 of each mode's 10,000 valid and test instances
drawn by its own ``max_eval_instances`` sampler, which ``--holistic-max-instances`` does not reproduce (docs/reference/helm-differences.md), and
all 10,000 at 50 tokens each would take the tiny model far too long; the scenario golden compares all 11,000
instances per mode with HELM's class. Dyck, HELM's other generated scenario, is covered at HELM's size.

CivilComments is covered for one demographic (``male``: the offline rows' comments naming it and no other); HELM's
``demographic=all`` run, and a comment naming two demographics, would put comments of other groups in one run, which
the suite's per-group run does not make (docs/reference/helm-differences.md, "CivilComments").
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_holistic.scenarios.helm_rows_mc import CIVIL_COMMENTS_DEMOGRAPHICS
from tests.conformance.inputs import scenarios as layouts

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "suites" / "core" / "data"

Row = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """One run on both sides.

    ``rows``: per split of the offline file, how many of its first rows are kept (file order). ``entry``: HELM's run
    entry, the model added by the generator. ``helm_files``: the kept rows as the files HELM's class downloads,
    ``{path under benchmark_output/scenarios/<scenario>/: text}``. ``test``: the suite's test function to run.
    ``extra``: a test function appended to the copied suite file (a method or setting the core suite does not use).
    ``pick``: which rows count at all (CivilComments: one demographic's comments, the run HELM makes of them).
    ``group``: the instance group the case's records belong to, where one pytest run holds several of HELM's runs
    (MMLU: the suite runs every subject, each a group, where HELM runs one subject per run). ``data`` is None for a
    scenario both sides generate (Dyck); ``run_name`` is the start of HELM's run name where its run spec names the
    run itself (``dyck_language_np=3``) instead of after the entry.
    """

    name: str
    suite: str
    test: str
    data: str | None
    rows: Mapping[str | None, int]
    entry: str
    helm_scenario: str
    helm_files: Callable[[list[Row]], Mapping[str, Any]]
    extra: str | None = None
    pick: Callable[[Row], bool] | None = None
    group: str | None = None
    run_name: str | None = None

    def kept(self) -> list[dict[str, Any]]:
        """The offline edition's rows this case keeps, in the file's order."""
        if self.data is None:
            return []
        left = dict(self.rows)
        kept = []
        for line in (DATA / self.data).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if self.pick is not None and not self.pick(row):
                continue
            if left.get(row.get("split"), 0) > 0:
                left[row.get("split")] -= 1
                kept.append(row)
        return kept


def _boolq(rows: list[Row]) -> dict[str, Any]:
    """BoolQ, with the kept validation rows' contrast sets: HELM's class attaches them to its instances
    (``contrast_inputs``) for the contrast perturbation, which the canonical run does not ask for."""
    return layouts.boolq_files(layouts.by_split(rows, ("train", "validation")))


def _mmlu(subject: str) -> Callable[[list[Row]], dict[str, Any]]:
    return lambda rows: layouts.mmlu_files(layouts.by_split(rows, ("dev", "test")), subject)


MMLU_SUBJECTS = ("astronomy", "biology", "computer_science", "elementary_mathematics", "geography", "world_history")
"""The offline edition's subjects; HELM runs each on its own."""

PILE_SUBSET = "BookCorpus2"
"""A subset HELM reads whole (no subsample indices to fetch); HELM caches a subset as ``<subset>.csv``, one document a row."""


def _the_pile(rows: list[Row]) -> dict[str, str]:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    for r in rows:
        writer.writerow([r["text"]])
    # ``data`` stands for the downloaded archive; its presence is all HELM checks once the subset's CSV exists.
    return {"data": "", f"{PILE_SUBSET}.csv": text.getvalue()}


DYCK = """

@pytest.mark.holistic(
    dyck_language(pairs=3),
    adapter="generation",
    perturbations=False,
    instructions="Please complete the rest of the following Dyck sequences, making sure that the parentheses are closed properly.\\n",
    input_prefix="Input: ",
    input_suffix="",
    output_prefix="",
    output_suffix="",
    max_train_instances=3,
    max_tokens=5,
    stop=("\\n",),
    metrics=("exact_match_indicator", "exact_match", "prefix_exact_match", "ece_10_bin", "ece_1_bin"),
)
def test_dyck_helm_size(completion):
    pass
"""
"""The suite's Dyck test at HELM's size: all 500 test instances of HELM's ``dyck_language_np=3`` run (the suite
evaluates its first 30)."""

CASES: tuple[Case, ...] = (
    Case(
        "boolq",
        "test_boolq.py",
        "test_boolq",
        "boolq.jsonl",
        {"train": 6, "validation": 60},
        # HELM's 5 in-context examples (pytest runs with --holistic-helm-shots); canonical: robustness and fairness
        "boolq:data_augmentation=canonical",
        "boolq",
        _boolq,
    ),
    *(
        Case(
            f"mmlu_{subject}",
            "test_mmlu.py",
            "test_mmlu",
            "mmlu.jsonl",
            {"dev": 5, "test": 10},  # the subject's whole edition: HELM's five examples, ten questions
            f"mmlu:subject={subject}",
            "mmlu",
            _mmlu(subject),
            pick=lambda row, subject=subject: row["subject"] == subject,
            group=subject,
        )
        for subject in MMLU_SUBJECTS
    ),
    Case(
        "hellaswag",
        "test_hellaswag.py",
        "test_hellaswag",
        "hellaswag.jsonl",
        {"train": 3, "val": 15},
        "commonsense:dataset=hellaswag,method=multiple_choice_separate_original",
        "hellaswag",
        # Rowan/hellaswag's rows carry their split ("train", "val") as a column, which HELM's file keeps
        lambda rows: layouts.hellaswag_files(layouts.by_split(rows, ("train", "val"), drop=("id",))),
    ),
    Case(
        "openbookqa",
        "test_openbookqa.py",
        "test_openbookqa_calibrated",
        "openbookqa.jsonl",
        {"train": 4, "test": 15},
        "commonsense:dataset=openbookqa,method=multiple_choice_separate_calibrated",
        "openbookqa",
        lambda rows: layouts.openbookqa_files(layouts.by_split(rows, ("train", "test"), drop=("split",))),
        # HELM's adapter spec for the separate methods (adaptation/common_adapter_specs.py,
        # get_multiple_choice_separate_adapter_spec), as the HellaSwag suite writes it for the original method.
        extra="""

@pytest.mark.holistic(
    openbookqa,
    adapter="multiple_choice_calibrated",
    instructions="",
    input_prefix="",
    input_suffix="",
    output_prefix=" ",
    output_suffix="",
    max_train_instances=0,
    perturbations=False,
    metrics=(*metrics.HELM_EXACT_MATCH, *metrics.CALIBRATION),
)
def test_openbookqa_calibrated(completion):
    assert completion.text in completion.choices
""",
    ),
    Case(
        "the_pile",
        "test_language_modeling.py",
        "test_the_pile_whole",
        "the_pile.jsonl",
        {None: 10},
        f"the_pile:subset={PILE_SUBSET}",
        "the_pile",
        _the_pile,
        # The suite cuts documents into 32-word pieces, a stated difference from HELM's token windows (docs/reference/helm-differences.md); one
        # piece per document scores what HELM's one window scores, so the arithmetic can be compared.
        extra="""

@pytest.mark.holistic(the_pile, adapter="language_modeling", chunk_words=4096, metrics=("bits_per_byte", "perplexity"))
def test_the_pile_whole(completion):
    assert completion.scored_tokens > 0
""",
    ),
    Case(
        "imdb",
        "test_imdb.py",
        "test_imdb",
        "imdb.jsonl",
        {"train": 6, "test": 60},  # the test rows' contrast sets are written, never run
        "imdb:data_augmentation=canonical",
        "imdb",
        lambda rows: layouts.imdb_files(layouts.by_split(rows, ("train", "test"))),
    ),
    Case(
        "truthful_qa",
        "test_truthfulqa.py",
        "test_truthfulqa",
        "truthfulqa.jsonl",
        {None: 20},  # HELM's first 20% (4 rows) are the in-context pool, the other 16 evaluated
        "truthful_qa:task=mc_single",
        "truthful_qa",
        layouts.truthfulqa_files,
    ),
    Case(
        "narrative_qa",
        "test_narrative_qa.py",
        "test_narrative_qa",
        "narrative_qa.jsonl",
        {"train": 5, "test": 15},
        # open-ended metrics (F1, ROUGE-L, BLEU) under HELM's robustness and fairness perturbations
        "narrative_qa:data_augmentation=canonical",
        "narrativeqa",  # NarrativeQAScenario.name, the folder it downloads into
        lambda rows: layouts.narrative_qa_files(layouts.by_split(rows, ("train", "test"))),
    ),
    Case(
        "quac",
        "test_quac.py",
        "test_quac",
        "quac.jsonl",
        {"train": 5, "valid": 15},
        "quac",
        "quac",
        lambda rows: layouts.quac_files(layouts.by_split(rows, ("train", "valid"))),
    ),
    Case(
        "natural_qa_openbook_longans",
        "test_natural_qa.py",
        "test_natural_qa_openbook_longans",
        "natural_qa.jsonl",
        {None: 20},  # HELM's split by position: 10 train, 10 valid
        "natural_qa:mode=openbook_longans",
        "natural_qa",
        layouts.natural_qa_files,
    ),
    Case(
        "natural_qa_closedbook",
        "test_natural_qa.py",
        "test_natural_qa_closedbook",
        "natural_qa.jsonl",
        {None: 20},
        "natural_qa:mode=closedbook",
        "natural_qa",
        layouts.natural_qa_files,
    ),
    Case(
        "dyck",
        "test_dyck.py",
        "test_dyck_helm_size",
        None,  # both sides generate HELM's instances from its seed
        {},
        "dyck_language:num_parenthesis_pairs=3",
        "dyck_language",
        lambda rows: {},
        extra=DYCK,
        run_name="dyck_language_np=3",
    ),
    Case(
        "civil_comments",
        "test_civil_comments.py",
        "test_civil_comments",
        "civil_comments.jsonl",
        {"train": 5, "test": 18},
        "civil_comments:demographic=male",
        "civil_comments",
        lambda rows: {"wilds_civil_comments.csv": layouts.civil_comments_csv(rows)},
        # Only comments naming the demographic and no other: HELM's run holds no other, and the suite's one run then
        # holds this demographic alone (its run-level numbers are HELM's) with no other group's ids beside it.
        pick=lambda row: [k for k in CIVIL_COMMENTS_DEMOGRAPHICS if (row.get(k) or 0) >= 0.5] == ["male"],
    ),
)


SERVED_CASES: tuple[str, ...] = ("boolq", "mmlu_astronomy", "truthful_qa", "hellaswag", "openbookqa", "dyck")
"""Cases run a second time with the model behind an OpenAI-compatible server (``server.py``): HELM through its
``OpenAILegacyCompletionsClient``, pytest through its ``openai:`` backend. A served model returns its answers'
log-probabilities, which HELM's ``HuggingFaceClient`` does not, so these runs are where HELM computes calibration:
one case per adapter method that has it (generation, joint, separate, calibrated), and Dyck, where the model often
ends its answer at once (an answer of no tokens, whose probability HELM reads as 1)."""


def served(name: str) -> str:
    """The golden's key of a case's served run."""
    return f"{name}@served"

