"""The runs the runner golden covers: which offline rows, which suite file, which HELM run entry, HELM's files.

Both runners read the same rows: a few of each offline edition's (``suites/core/data``), picked here. The pytest side
runs a copy of the core suite's own file beside a ``data/`` folder holding only those rows; HELM's side finds the same
rows pre-written in the files its scenario class would download (``ensure_file_downloaded`` skips a path that
exists), laid out as HELM's sources have them. The run entries use HELM's run-spec functions unchanged, at HELM's
in-context counts, and so does the pytest run (``--holistic-helm-shots``): both sides make the same run. Only facts
of HELM's file layouts are carried over (scenario classes in helm/benchmark/scenarios/, HELM 0.5.16).

Not covered: ranking. HELM's ``MSMARCOScenario`` reads a BM25 run: a training query needs 20 ranked passages with a
wrong one ranked 11 to 20, a validation query at least ``valid_topk`` of them (11 or more, ``MIN_TOPK``; without it,
only its judged passages, i.e. the gold ones), while the offline rows hold the 7 passages Bing returned per query; writing them as HELM's files would mean inventing passages, so the two runs would not be
the same run. (The project's ranking also scores ``Yes``/``No`` where HELM generates: README, "Where we differ".)
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "suites" / "core" / "data"

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Case:
    """One run on both sides.

    ``rows``: per split of the offline file, how many of its first rows are kept (file order). ``entry``: HELM's run
    entry, the model added by the generator. ``helm_files``: the kept rows as the files HELM's class downloads,
    ``{path under benchmark_output/scenarios/<scenario>/: text}``. ``test``: the suite's test function to run.
    ``marker``: marker keywords the copied suite file gets instead of its own (a method the core suite does not use).
    """

    name: str
    suite: str
    test: str
    data: str
    rows: Mapping[str | None, int]
    entry: str
    helm_scenario: str
    helm_files: Callable[[Sequence[Row]], dict[str, str]]
    extra: str | None = None

    def kept(self) -> list[dict[str, Any]]:
        """The offline edition's rows this case keeps, in the file's order."""
        left = dict(self.rows)
        kept = []
        for line in (DATA / self.data).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if left.get(row.get("split"), 0) > 0:
                left[row.get("split")] -= 1
                kept.append(row)
        return kept


def _jsonl(rows: Sequence[Row]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _split(rows: Sequence[Row], split: str) -> list[Row]:
    return [row for row in rows if row.get("split") == split]


def _boolq(rows: Sequence[Row]) -> dict[str, str]:
    """BoolQ: ``data/train`` and ``data/dev`` (question, passage, answer as a boolean) and the contrast-set file, empty."""

    def triplets(split: str) -> str:
        return _jsonl([{"question": r["question"], "passage": r["passage"], "answer": r["answer"]} for r in _split(rows, split)])

    # boolq_perturbed.jsonl is one JSON object whose "data" list starts with a header entry HELM skips.
    contrast = json.dumps({"data": [{}]})
    return {"data/train": triplets("train"), "data/dev": triplets("validation"), "data/boolq_perturbed.jsonl": contrast}


def _mmlu(subject: str) -> Callable[[Sequence[Row]], dict[str, str]]:
    """MMLU: ``data/<split>/<subject>_<split>.csv``, rows ``question, choice..., letter`` without a header."""

    def files(rows: Sequence[Row]) -> dict[str, str]:
        out: dict[str, str] = {}
        for split in ("dev", "test"):
            text = io.StringIO()
            writer = csv.writer(text, lineterminator="\n")
            for r in _split(rows, split):
                writer.writerow([r["question"], *r["choices"], "ABCDE"[int(r["answer"])]])
            out[f"data/{split}/{subject}_{split}.csv"] = text.getvalue()
        return out

    return files


def _hellaswag(rows: Sequence[Row]) -> dict[str, str]:
    """HellaSwag: ``data/hellaswag_{train,val}.jsonl``, the original release's rows (``label`` an integer)."""
    fields = ("ind", "activity_label", "ctx_a", "ctx_b", "ctx", "endings", "source_id", "split", "split_type")
    return {
        f"data/hellaswag_{split}.jsonl": _jsonl(
            [{**{k: r[k] for k in fields}, "label": int(r["label"])} for r in _split(rows, split)]
        )
        for split in ("train", "val")
    }


def _openbookqa(rows: Sequence[Row]) -> dict[str, str]:
    """OpenBookQA: ``data/OpenBookQA-V1-Sep2018/Data/Main/{train,test}.jsonl``, the release's nested rows."""

    def item(r: Row) -> dict[str, Any]:
        choices = [{"text": t, "label": l} for t, l in zip(r["choices"]["text"], r["choices"]["label"])]
        return {"id": r["id"], "question": {"stem": r["question_stem"], "choices": choices}, "answerKey": r["answerKey"]}

    return {
        f"data/OpenBookQA-V1-Sep2018/Data/Main/{split}.jsonl": _jsonl([item(r) for r in _split(rows, split)])
        for split in ("train", "test")
    }


PILE_SUBSET = "BookCorpus2"
"""A subset HELM reads whole (no subsample indices to fetch); HELM caches a subset as ``<subset>.csv``, one document a row."""


def _the_pile(rows: Sequence[Row]) -> dict[str, str]:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    for r in rows:
        writer.writerow([r["text"]])
    # ``data`` stands for the downloaded archive; its presence is all HELM checks once the subset's CSV exists.
    return {"data": "", f"{PILE_SUBSET}.csv": text.getvalue()}


CASES: tuple[Case, ...] = (
    Case(
        "boolq",
        "test_boolq.py",
        "test_boolq",
        "boolq.jsonl",
        {"train": 6, "validation": 5},
        # HELM's 5 in-context examples (pytest runs with --holistic-helm-shots); canonical: robustness and fairness
        "boolq:data_augmentation=canonical",
        "boolq",
        _boolq,
    ),
    Case(
        "mmlu",
        "test_mmlu.py",
        "test_mmlu",
        "mmlu.jsonl",
        {"dev": 5, "test": 5},  # the file's first rows: astronomy's
        "mmlu:subject=astronomy",
        "mmlu",
        _mmlu("astronomy"),
    ),
    Case(
        "hellaswag",
        "test_hellaswag.py",
        "test_hellaswag",
        "hellaswag.jsonl",
        {"train": 3, "val": 5},
        "commonsense:dataset=hellaswag,method=multiple_choice_separate_original",
        "hellaswag",
        _hellaswag,
    ),
    Case(
        "openbookqa",
        "test_openbookqa.py",
        "test_openbookqa_calibrated",
        "openbookqa.jsonl",
        {"train": 4, "test": 5},
        "commonsense:dataset=openbookqa,method=multiple_choice_separate_calibrated",
        "openbookqa",
        _openbookqa,
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
        {None: 3},
        f"the_pile:subset={PILE_SUBSET}",
        "the_pile",
        _the_pile,
        # The suite cuts documents into 32-word pieces, a stated difference from HELM's token windows (README); one
        # piece per document scores what HELM's one window scores, so the arithmetic can be compared.
        extra="""

@pytest.mark.holistic(the_pile, adapter="language_modeling", chunk_words=4096, metrics=("bits_per_byte", "perplexity"))
def test_the_pile_whole(completion):
    assert completion.scored_tokens > 0
""",
    ),
)
