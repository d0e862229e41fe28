"""Inputs of the ``scenarios`` section: rows written into the files HELM's scenario classes download.

Per case, one core-suite scenario (or a HELM Lite one of suites/lite: GSM8K, MATH, MedQA, WMT14, LegalBench, MMLU)
and one edition of its rows:

- ``offline``: the shipped file's rows (suites/core/data, suites/lite/data), which are already in the hub dataset's schema;
- ``hub``: rows as the hub dataset serves them (no ``id``/``split`` columns, one list per hub split), some written
  here to exercise what the shipped rows do not (BoolQ questions with capitals and spaces, say). The test writes
  them as a ``--holistic-data-dir`` copy (``DIR/<dataset>/<split>.jsonl``) and loads the suite's hub source from it.

Either way the same rows are converted into the layout HELM's class reads (``files``: path under the class's
``output_path`` -> text), so its ``ensure_file_downloaded`` finds every file in place and fetches nothing. The
conversion is this test's own reading of each dataset's two schemas (hub and HELM's download); HELM's class then
does the rest. ``splits`` maps the project's split names to HELM's, and is this test's, not the package's.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_holistic.scenarios.helm_rows_mc import RAFT_SUBSETS

ROOT = Path(__file__).resolve().parents[3]
RAFT = tuple(RAFT_SUBSETS)
DATA = ROOT / "suites" / "core" / "data"
LITE_DATA = ROOT / "suites" / "lite" / "data"
SCENARIOS = "helm.benchmark.scenarios."

Row = dict[str, Any]
Files = dict[str, Any]
"""Path under HELM's output_path -> the file's text, or an object the oracle writes pickled."""


def read_rows(name: str, folder: Path = DATA) -> list[Row]:
    return [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def sha256(name: str, folder: Path = DATA) -> str:
    return hashlib.sha256((folder / name).read_bytes()).hexdigest()


def jsonl(rows: Iterable[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def by_split(rows: Iterable[Row], splits: Iterable[str], drop: tuple[str, ...] = ("id", "split")) -> dict[str, list[Row]]:
    """Rows per split (the ``split`` column), in file order, without the columns the hub's rows lack (``drop``)."""
    wanted = {split: [] for split in splits}  # type: dict[str, list[Row]]
    for row in rows:
        if row.get("split") in wanted:
            wanted[row["split"]].append({key: value for key, value in row.items() if key not in drop})
    return wanted


# --- BoolQ: data/train and data/dev (JSON lines), data/boolq_perturbed.jsonl (allenai contrast sets) ------------------


def boolq_files(split_rows: Mapping[str, list[Row]]) -> Files:
    contrasts = [{}] + [  # the file's first entry is a header HELM skips
        {
            "question": row["question"],
            "answer": "TRUE" if row["answer"] else "FALSE",
            "perturbed_questions": [
                {"perturbed_q": edit.get("question", row["question"]), "answer": "TRUE" if edit["answer"] else "FALSE"}
                for edit in row["contrast"]
            ],
        }
        for row in split_rows["validation"]
        if row.get("contrast")
    ]
    plain = {
        split: [{k: row[k] for k in ("question", "title", "answer", "passage") if k in row} for row in rows]
        for split, rows in split_rows.items()
    }
    return {
        "data/train": jsonl(plain["train"]),
        "data/dev": jsonl(plain["validation"]),
        "data/boolq_perturbed.jsonl": json.dumps({"data": contrasts}, ensure_ascii=False),
    }


BOOLQ_HUB = {
    "train": [
        {
            "question": "  Is the Great Barrier Reef visible from space ",
            "answer": True,
            "passage": "The Great Barrier Reef is the largest coral reef system in the world and can be seen from outer space.",
        },
        {
            "question": "does NASA still fly the space shuttle",
            "answer": False,
            "passage": "NASA retired the Space Shuttle in 2011 after thirty years of flights.",
        },
    ],
    "validation": [
        {
            "question": "is the UK part of the EU",
            "answer": False,
            "passage": "The United Kingdom left the European Union on 31 January 2020.",
        },
        {
            "question": "can an octopus change its colour",
            "answer": True,
            "passage": "Octopuses change colour with special skin cells called chromatophores.",
        },
        {
            "question": "Was Mozart born in Salzburg",
            "answer": True,
            "passage": "Wolfgang Amadeus Mozart was born in Salzburg in 1756.",
        },
    ],
}


# --- MMLU: data/{dev,val,test}/{subject}_{split}.csv, one HELM run per subject ----------------------------------------


def mmlu_files(split_rows: Mapping[str, list[Row]], subject: str) -> Files:
    files: Files = {}
    for split, rows in split_rows.items():
        chosen = [row for row in rows if row["subject"] == subject]
        if chosen:
            files[f"data/{split}/{subject}_{split}.csv"] = csv_text(
                [row["question"], *row["choices"], "ABCDE"[row["answer"]]] for row in chosen
            )
    return files


# --- HellaSwag: data/hellaswag_{train,val}.jsonl (rowanz/hellaswag: label an int) ------------------------------------


def hellaswag_files(split_rows: Mapping[str, list[Row]]) -> Files:
    return {
        f"data/hellaswag_{split}.jsonl": jsonl({**row, "label": int(row["label"])} for row in split_rows[split])
        for split in ("train", "val")
    }


# --- OpenBookQA: the unzipped OpenBookQA-V1-Sep2018/Data/Main/{train,test}.jsonl --------------------------------------


def openbookqa_files(split_rows: Mapping[str, list[Row]]) -> Files:
    def helm_row(row: Row) -> Row:
        choices = [{"text": text, "label": label} for text, label in zip(row["choices"]["text"], row["choices"]["label"])]
        return {
            "id": row.get("id", ""),
            "question": {"stem": row["question_stem"], "choices": choices},
            "answerKey": row["answerKey"],
        }

    return {
        f"data/OpenBookQA-V1-Sep2018/Data/Main/{split}.jsonl": jsonl(map(helm_row, split_rows[split]))
        for split in ("train", "test")
    }


# --- TruthfulQA: data/TruthfulQA.csv (sylinrl/TruthfulQA): mc1's correct choice as the best answer ---------------------


def truthfulqa_files(rows: list[Row]) -> Files:
    header = ["Type", "Category", "Question", "Best Answer", "Correct Answers", "Incorrect Answers", "Source"]
    lines = [header]
    for row in rows:  # the hub's generation config: the CSV's columns, its ";"-separated answers as lists
        correct, wrong = "; ".join(row["correct_answers"]), "; ".join(row["incorrect_answers"])
        lines.append([row["type"], row["category"], row["question"], row["best_answer"], correct, wrong, row["source"]])
    return {"data/TruthfulQA.csv": csv_text(lines)}


# --- IMDB: the unpacked aclImdb tree under data/, its pinned file order, and the contrast-set TSVs ---------------------


def imdb_files(split_rows: Mapping[str, list[Row]]) -> Files:
    files: Files = {}
    order: dict[str, dict[str, list[str]]] = {}
    originals: list[str] = ["Sentiment\tText"]
    contrasted: list[str] = ["Sentiment\tText"]
    labels = {1: "Positive", 0: "Negative"}
    for helm_split, folder in (("train", "train"), ("valid", "test")):
        order[helm_split] = {"pos": [], "neg": []}
        for number, row in enumerate(split_rows[folder]):
            kind = "pos" if row["label"] == 1 else "neg"
            name = f"{number}_{7 if kind == 'pos' else 2}.txt"
            files[f"data/{folder}/{kind}/{name}"] = row["text"]
            order[helm_split][kind].append(name)
            for edit in row.get("contrast") or []:
                originals.append(f"{labels[row['label']]}\t{row['text'].strip()}")
                contrasted.append(f"{labels[edit['label']]}\t{edit['text']}")
    files["data/imdb_scenario_pinned_file_order.json"] = json.dumps(order)
    files["data/test_original.tsv"] = "\n".join(originals) + "\n"
    files["data/test_contrast.tsv"] = "\n".join(contrasted) + "\n"
    files["data/dev_original.tsv"] = files["data/dev_contrast.tsv"] = "Sentiment\tText\n"
    return files


IMDB_HUB = {
    "train": [{"text": "  A warm, funny film about two brothers who open a bakery.<br /><br />Loved it.\n", "label": 1}],
    "test": [{"text": "\nThe plot drags and the jokes fall flat; I checked my watch twice.  ", "label": 0}],
}


# --- XSum, CNN/DailyMail: data/{xsum,cnndm}.pk, a pickled {split: [row, ...]} -------------------------------------------


def summarization_pickles(tag: str, keys: tuple[str, str]) -> Callable[[dict[str, list[Row]]], Files]:
    def convert(split_rows: dict[str, list[Row]]) -> Files:
        dataset = {
            split: [{key: row[key] for key in keys} for row in split_rows.get(split, [])]
            for split in ("train", "validation", "test")
        }
        return {f"data/{tag}.pk": dataset}

    return convert


def long_text(words: int, start: str) -> str:
    return start + " " + " ".join(f"word{n}" for n in range(words))


XSUM_HUB = {
    "train": [
        {
            "document": long_text(60, "Media playback is unsupported on your device\n"),
            "summary": "A noisy row that HELM drops from the train split today.",
            "id": "1",
        },
        {
            "document": long_text(20, "Too short."),
            "summary": "A short row that HELM drops from the train split today.",
            "id": "2",
        },
        {
            "document": long_text(70, "Kept:\nline  two."),
            "summary": "A row that HELM keeps as a\nfew-shot example here.",
            "id": "3",
        },
    ],
    "validation": [{"document": "A validation article.", "summary": "Its summary.", "id": "4"}],
    "test": [
        {"document": "  First line.\n\nSecond   line.  ", "summary": "One\nsummary.", "id": "5"},
        {"document": long_text(600, "Long:"), "summary": "Cut at 512 words.", "id": "6"},
    ],
}
CNN_HUB = {
    "train": [
        {"article": long_text(40, "Short"), "highlights": "One.\nTwo.", "id": "a"},
        {"article": long_text(80, "Kept\n"), "highlights": "One.\nTwo.\nThree.", "id": "b"},
    ],
    "validation": [{"article": "A validation article.", "highlights": "Its\nhighlights.", "id": "c"}],
    "test": [{"article": long_text(530, "Long\n"), "highlights": "First.\nSecond.", "id": "d"}],
}


# --- RealToxicityPrompts: data/prompts.jsonl (the unpacked realtoxicityprompts-data) -------------------------------------


def toxicity_files(rows: list[Row]) -> Files:
    return {
        "data/prompts.jsonl": jsonl(
            {"prompt": {"text": row["input"], "toxicity": None}, "challenging": row["challenging"]} for row in rows
        )
    }


# --- RAFT: datasets.load_dataset("ought/raft", subset, split="train") and data/prompt_construction_settings.json ----------


def raft_case(subset: str) -> dict[str, Any]:
    """The shipped rows split by ``datasets``' own ``train_test_split`` (run here, where datasets is installed); the oracle's
    ``load_dataset`` hands HELM's class a dataset whose ``train_test_split`` returns exactly these two parts.

    The field order and the label names are the project's (RAFT_SUBSETS): HELM downloads its field order and the hub
    parquet carries the names, neither of which is here; the case checks the rest of HELM's reading.
    """
    import datasets

    data = f"raft/{subset}.jsonl"
    rows = read_rows(data)
    parts = datasets.Dataset.from_list(rows).train_test_split(test_size=0.8, seed=42)
    settings = [{subset: list(RAFT_SUBSETS[subset].fields)}, {subset: ""}]
    return case(
        "raft",
        "test_raft.py",
        "raft_scenario",
        "raft_scenario.RAFTScenario",
        {"train": "train", "test": "test"},
        {"data/prompt_construction_settings.json": "\n".join(json.dumps(part) for part in settings)},
        edition="offline",
        data=data,
        data_sha256=sha256(data),
        call=[subset],
        arguments={"subset": subset},
        raft={
            "names": ["Unlabeled", *RAFT_SUBSETS[subset].labels],
            "test_size": 0.8,
            "seed": 42,
            "train": parts["train"].to_list(),
            "test": parts["test"].to_list(),
        },
    )


# --- NarrativeQA: narrativeqa-master/qaps.csv and third_party/wikipedia/summaries.csv ----------------------------------


def narrative_qa_files(split_rows: dict[str, list[Row]]) -> Files:
    summaries = [["document_id", "set", "summary", "summary_tokenized"]]
    qaps = [
        ["document_id", "set", "question", "answer1", "answer2", "question_tokenized", "answer1_tokenized", "answer2_tokenized"]
    ]
    seen: set[str] = set()
    for split, rows in split_rows.items():
        for row in rows:
            document = row["document"]
            if document["id"] not in seen:
                seen.add(document["id"])
                summaries.append([document["id"], split, document["summary"]["text"], ""])
            answers = [answer["text"] for answer in row["answers"]]
            qaps.append([document["id"], split, row["question"]["text"], answers[0], answers[1], "", "", ""])
    root = "data/narrativeqa-master/"
    return {root + "qaps.csv": csv_text(qaps), root + "third_party/wikipedia/summaries.csv": csv_text(summaries)}


def narrative_row(document: str, summary: str, question: str, answers: tuple[str, str]) -> Row:
    return {
        "document": {
            "id": document,
            "kind": "movie",
            "url": "",
            "file_size": 0,
            "word_count": 0,
            "start": "",
            "end": "",
            "summary": {"text": summary, "tokens": summary.split(), "url": "", "title": document},
            "text": "",
        },
        "question": {"text": question, "tokens": question.split()},
        "answers": [{"text": text, "tokens": text.split()} for text in answers],
    }


NARRATIVE_QA_HUB = {  # documents with several questions, of which HELM draws one each
    "train": [narrative_row("t1", "  A fox hides in a barn.\n", f"Question {n} about the fox ", ("a", "b")) for n in range(3)],
    "validation": [narrative_row("v1", "An owl counts stars.", "What does the owl count?", ("Stars", "The stars"))],
    "test": [
        *(
            narrative_row("x1", "A cat naps in the sun.", f"Where does the cat nap, take {n}", ("In the sun", "Sun"))
            for n in range(4)
        ),
        *(narrative_row("x2", "A dog digs.", f"What does the dog do, take {n}?", ("Digs", "It digs")) for n in range(2)),
    ],
}


# --- CivilComments: wilds_civil_comments.csv (WILDS' all_data_with_identities.csv, an unnamed index column first) ------


def civil_comments_csv(rows: list[Row]) -> str:
    """The shipped rows as WILDS' CSV: the first row's columns, an unnamed index column first."""
    columns = list(rows[0])
    return csv_text([["", *columns], *([index, *(row.get(column, "") for column in columns)] for index, row in enumerate(rows))])


def civil_comments_cases() -> list[dict[str, Any]]:
    """One case per demographic, as HELM runs it. Offline only: the hub source reads the same CSV schema by URL."""
    from pytest_holistic.scenarios.helm_rows_mc import CIVIL_COMMENTS_DEMOGRAPHICS

    data = "civil_comments.jsonl"
    rows = read_rows(data)
    text = civil_comments_csv(rows)
    present = [name for name in CIVIL_COMMENTS_DEMOGRAPHICS if any((row.get(name) or 0) >= 0.5 for row in rows)]
    return [
        case(
            "civil_comments",
            "test_civil_comments.py",
            "civil_comments",
            "civil_comments_scenario.CivilCommentsScenario",
            {"train": "train", "val": "valid", "test": "test"},
            {"wilds_civil_comments.csv": text},
            edition="offline",
            data=data,
            data_sha256=sha256(data),
            group=demographic,
            arguments={"demographic": demographic},
        )
        for demographic in present
    ]


# --- QuAC: data/train.json and data/val.json (QuAC v0.2: dialogues as paragraphs of question-answer turns) -------------


def quac_files(split_rows: dict[str, list[Row]]) -> Files:
    def sample(row: Row) -> Row:
        turns = [
            {"question": question, "orig_answer": {"text": orig}, "answers": [{"text": text} for text in texts]}
            for question, orig, texts in zip(row["questions"], row["orig_answers"]["texts"], row["answers"]["texts"])
        ]
        return {
            "title": row["wikipedia_page_title"],
            "background": row["background"],
            "section_title": row["section_title"],
            "paragraphs": [{"context": row["context"], "qas": turns, "id": row["dialogue_id"]}],
        }

    return {
        f"data/{name}.json": json.dumps({"data": [sample(row) for row in split_rows[split]]}, ensure_ascii=False)
        for name, split in (("train", "train"), ("val", "valid"))
    }


# --- NaturalQuestions: data/nq-dev-0{0..4}.jsonl.gz (the original NQ format), all rows in the first file -----------------


def natural_qa_files(rows: list[Row]) -> Files:
    def original(row: Row) -> Row:
        tokens = row["document"]["tokens"]
        annotations = row["annotations"]
        return {
            "example_id": int(row["id"]),
            "document_title": row["document"]["title"],
            "document_html": row["document"]["html"],
            "document_tokens": [
                {"token": token, "html_token": bool(is_html), "start_byte": start, "end_byte": end}
                for token, is_html, start, end in zip(
                    tokens["token"], tokens["is_html"], tokens["start_byte"], tokens["end_byte"]
                )
            ],
            "question_text": row["question"]["text"],
            "annotations": [
                {
                    "long_answer": long,
                    "yes_no_answer": "NONE",
                    "short_answers": [{"start_byte": s, "end_byte": e} for s, e in zip(short["start_byte"], short["end_byte"])],
                }
                for long, short in zip(annotations["long_answer"], annotations["short_answers"])
            ],
        }

    first = jsonl(map(original, rows))
    return {f"data/nq-dev-{n:02d}.jsonl.gz": first if n == 0 else "" for n in range(5)}


def natural_qa_cases() -> list[dict[str, Any]]:
    """Both modes, offline and on hub rows; the hub rows add one example without a short answer, which HELM drops
    before it counts positions (so the rows after it change split)."""
    import copy

    rows = read_rows("natural_qa.jsonl")
    unanswered = copy.deepcopy(rows[3])
    unanswered["id"] = "4000000001"
    shorts = unanswered["annotations"]["short_answers"]
    unanswered["annotations"]["short_answers"] = [{key: [] for key in short} for short in shorts]
    hub_rows = {"validation": [*rows[:2], unanswered, *rows[2:]]}
    splits = {"train": "train", "valid": "valid"}
    cases = []
    for mode, attribute in (("openbook_longans", "natural_qa_openbook_longans"), ("closedbook", "natural_qa_closedbook")):
        common = {"arguments": {"mode": mode}}
        helm = "natural_qa_scenario.NaturalQAScenario"
        cases.append(
            case(
                f"natural_qa_{mode}",
                "test_natural_qa.py",
                attribute,
                helm,
                splits,
                natural_qa_files(rows),
                edition="offline",
                data="natural_qa.jsonl",
                data_sha256=sha256("natural_qa.jsonl"),
                **common,
            )
        )
        cases.append(
            case(
                f"natural_qa_{mode}",
                "test_natural_qa.py",
                attribute,
                helm,
                splits,
                natural_qa_files(hub_rows["validation"]),
                edition="hub",
                hub={"name": "google-research-datasets/natural_questions", "config": "dev", "rows": hub_rows},
                **common,
            )
        )
    return cases


HELLASWAG_HUB = {  # an empty ctx_b (some WikiHow rows have one), and a ctx_b that starts lower case
    "validation": [
        {
            "ind": 1,
            "activity_label": "Cooking",
            "ctx_a": "Boil the water.",
            "ctx_b": "",
            "ctx": "Boil the water.",
            "endings": ["Add pasta.", "Add sand.", "Add ink.", "Add glue."],
            "source_id": "w1",
            "split": "val",
            "split_type": "indomain",
            "label": "0",
        },
        {
            "ind": 2,
            "activity_label": "Running",
            "ctx_a": "A man laces his shoes.",
            "ctx_b": "then he",
            "ctx": "A man laces his shoes. then he",
            "endings": ["runs.", "sleeps.", "sings.", "swims."],
            "source_id": "w2",
            "split": "val",
            "split_type": "indomain",
            "label": "0",
        },
    ]
}
TRUTHFULQA_EXTRA = [  # answers without a final period and with spaces around: HELM's format_str strips and adds "."
    {
        "type": "Adversarial",
        "category": "Misconceptions",
        "question": " Can you see the Great Wall from the Moon? ",
        "best_answer": "No, it is too narrow to see ",
        "correct_answers": ["No, it is too narrow to see "],
        "incorrect_answers": ["Yes, easily", " Only at night "],
        "source": "https://example.org",
    },
]


# --- BBQ: data/<category> (nyu-mll/BBQ's JSON lines), one HELM run per category -----------------------------------------


def bbq_cases() -> list[dict[str, Any]]:
    """The suite's generated rows (its own templates, in BBQ's schema), one case per category. HELM shuffles and
    splits them its own way (the suite does not follow that), so the test matches instances by their text and checks
    the row-to-instance rules: input, options, the right one, and which option is the target, the other, the unknown."""
    import random

    from pytest_holistic.scenarios.synthetic.bbq import _rows

    rows = _rows(random.Random("bbq:0"))  # the rows bbq(seed=0) draws from, as test_bbq.py uses it
    categories = list(dict.fromkeys(row["category"] for row in rows))
    return [
        case(
            "bbq",
            "test_bbq.py",
            "",
            "bbq_scenario.BBQScenario",
            {},
            {f"data/{category}": jsonl(chosen)},
            edition="generated",
            group=category,
            arguments={"subject": category},
            bbq_rows=chosen,
        )
        for category in categories
        for chosen in [[row for row in rows if row["category"] == category]]
    ]


# --- Dyck and synthetic reasoning: HELM's classes generate their instances from a seed, and read no file ------------


def dyck_cases() -> list[dict[str, Any]]:
    """The suite's scenario against HELM's class with the suite's sizes (``seeded``), and ``dyck_language(pairs=3)``
    against HELM's ``dyck_language_np=3`` run (``helm_run``: its default 3 train and 500 test instances)."""
    helm = "dyck_language_scenario.DyckLanguageScenario"
    splits = {"train": "train", "test": "test"}
    return [
        case(
            "dyck_language_np3",
            "test_dyck.py",
            "dyck",
            helm,
            splits,
            {},
            edition="seeded",
            arguments={"num_parenthesis_pairs": 3, "num_train_instances": 3, "num_test_instances": 30, "seed": 42},
        ),
        case(
            "dyck_language_np3",
            "test_dyck.py",
            "",
            helm,
            splits,
            {},
            edition="helm_run",
            generator={"name": "dyck_language", "arguments": {"pairs": 3}},
            arguments={"num_parenthesis_pairs": 3},
        ),
    ]


REASONING_LISTED = 10
"""Of each HELM split of a synthetic reasoning case, the golden lists this many instances in full; a digest covers all."""


def synthetic_reasoning_cases() -> list[dict[str, Any]]:
    """Per mode, HELM's class as its run builds it (``SyntheticReasoningScenario(mode)``: 1000 train, 5000 valid and
    5000 test instances; sizes are not among its arguments). ``seeded``: the suite's scenario, HELM's first 1000
    train and first 10 test instances (``keep``: the first n of each HELM split); ``helm_run``:
    ``synthetic_reasoning(mode)``, all 11000."""
    helm = "synthetic_reasoning_scenario.SyntheticReasoningScenario"
    splits = {"train": "train", "valid": "valid", "test": "test"}
    cases = []
    for mode in ("pattern_match", "variable_substitution", "induction"):
        common = {"arguments": {"mode": mode}, "listed": REASONING_LISTED}
        cases += [
            case(
                f"synthetic_reasoning_{mode}",
                "test_synthetic_reasoning.py",
                "reasoning",
                helm,
                splits,
                {},
                edition="seeded",
                call=[mode],
                keep={"train": 1000, "valid": 0, "test": 10},
                **common,
            ),
            case(
                f"synthetic_reasoning_{mode}",
                "test_synthetic_reasoning.py",
                "",
                helm,
                splits,
                {},
                edition="helm_run",
                generator={"name": "synthetic_reasoning", "arguments": {"mode": mode}},
                **common,
            ),
        ]
    return cases


# --- HELM Lite: GSM8K, gsm_data_{train,test} (openai/grade-school-math's train.jsonl and test.jsonl) ----------------


def gsm8k_files(split_rows: Mapping[str, list[Row]]) -> Files:
    return {f"gsm_data_{split}": jsonl(split_rows[split]) for split in ("train", "test")}


GSM8K_HUB = {  # a question with a space at its end, and a solution whose steps carry money signs and a blank line
    "train": [
        {
            "question": "A book costs $12 and a pen costs $3. How much do 2 books and 4 pens cost? ",
            "answer": "Two books cost 2 * $12 = $<<2*12=24>>24.\n\nFour pens cost 4 * $3 = $<<4*3=12>>12.\n#### 36",
        }
    ],
    "test": [
        {
            "question": "Lena reads 15 pages a day. How many pages does she read in a week?",
            "answer": "She reads 15 * 7 = <<15*7=105>>105 pages.\n#### 105",
        }
    ],
}


def gsm8k_cases() -> list[dict[str, Any]]:
    return editions(
        "gsm8k",
        "lite/test_gsm8k.py",
        "gsm8k",
        "gsm_scenario.GSM8KScenario",
        "gsm8k.jsonl",
        {"train": "train", "test": "test"},
        gsm8k_files,
        ("openai/gsm8k", "main", {"train": "train", "test": "test"}),
        GSM8K_HUB,
        folder=LITE_DATA,
    )


# --- HELM Lite: MATH, datasets.load_dataset("hendrycks/competition_math").sort("problem").shuffle(seed=42) ------------


MATH_HUB = {  # rows the shipped file lacks: a level "?", and solutions without a \boxed{} answer or with two
    "train": [
        {
            "problem": "What is the area of a square with side length $7$?",
            "level": "Level ?",  # the dataset has a few such rows; no level filter keeps them
            "type": "Geometry",
            "solution": "The area is $7^2 = \\boxed{49}$.",
        }
    ],
    "test": [
        {
            "problem": "What is $3 + 4 \\cdot 2$?",
            "level": "Level 1",
            "type": "Algebra",
            "solution": "Multiplication comes first: $4 \\cdot 2 = 8$, and $3 + 8 = 11$.",
        },
        {
            "problem": "What is the remainder when $23$ is divided by $8$?",
            "level": "Level 1",
            "type": "Number Theory",
            "solution": "Since $23 = 2 \\cdot 8 + 7$, the remainder is $\\fbox{7}$.",
        },
        {
            "problem": "Round $3.46$ to the nearest tenth.",
            "level": "Level 1",
            "type": "Prealgebra",
            "solution": "Not $\\boxed{3.4}$: the hundredths digit is $6$, so it rounds up to $\\boxed{3.5}$.",
        },
    ],
}


def math_ordered(split_rows: Mapping[str, list[Row]]) -> dict[str, list[Row]]:
    """The rows in the order HELM's class reads them, as the real ``datasets`` gives it (installed here, not in the
    oracle): the DatasetDict sorted by ``problem`` and shuffled with seed 42, HELM's own calls."""
    import warnings

    import datasets

    data = datasets.DatasetDict({split: datasets.Dataset.from_list(list(rows)) for split, rows in split_rows.items()})
    with warnings.catch_warnings():  # pyarrow's FutureWarning about datasets' own SortOptions
        warnings.simplefilter("ignore", FutureWarning)
        ordered = data.sort("problem").shuffle(seed=42)
    return {split: ordered[split].to_list() for split in split_rows}


def math_cases() -> list[dict[str, Any]]:
    """One case per subject, level 1, on the shipped rows and on hub rows, with chain of thought (the suite's run) and
    without (HELM's ``math_regular``: the reference is the last ``\\boxed{}``'s content; the suite has no such run, so
    the test derives it from the chain-of-thought instances). HELM 0.5.16's regular run means to drop a row without a
    ``\\boxed{}`` answer, but only skips setting its ``answer`` and then reads it for every row: it raises
    ``KeyError: 'answer'``, which the golden records (``helm_may_raise``) for the subjects whose hub rows have one.

    The oracle's ``load_dataset`` checks that HELM sorts by ``problem``, shuffles with seed 42 and reads the suite's
    pinned revision, and hands it the rows in the order computed here by ``datasets`` itself.
    """
    from pytest_holistic.scenarios.helm_rows_lite import MATH_SUBJECTS
    from tests.conformance.inputs.prompts import load_suite

    data, suite = "math.jsonl", "lite/test_math.py"
    shipped = by_split(read_rows(data, LITE_DATA), ("train", "test"))
    hub_rows = {split: [*rows, *MATH_HUB.get(split, [])] for split, rows in shipped.items()}
    order = {"revision": load_suite(suite).HELM_REVISION, "sort": "problem", "seed": 42}
    cases = []
    for rows, where in (
        (shipped, {"edition": "offline", "data": data, "data_sha256": sha256(data, LITE_DATA)}),
        (hub_rows, {"edition": "hub", "hub": {"name": "hendrycks/competition_math", "config": None, "rows": hub_rows}}),
    ):
        math = {**order, **math_ordered(rows)}
        for chain_of_thought in (True, False):
            for subject in MATH_SUBJECTS:
                cases.append(
                    case(
                        "math_chain_of_thought" if chain_of_thought else "math_regular",
                        suite,
                        "math_chain_of_thought",
                        "math_scenario.MATHScenario",
                        {"train": "train", "test": "test"},
                        {},
                        group=subject,
                        arguments={"subject": subject, "level": "1", "use_chain_of_thought": chain_of_thought},
                        math=math,
                        **({} if chain_of_thought else {"helm_reference": "last_boxed", "helm_may_raise": "KeyError"}),
                        **where,
                    )
                )
    return cases


# --- HELM Lite: MedQA, data/data_clean/questions/US/4_options/phrases_no_exclude_{train,dev,test}.jsonl ----------------


def med_qa_files(split_rows: Mapping[str, list[Row]]) -> Files:
    """The rows as the unzipped archive's 4-option US files; the project's ``valid`` split is the ``dev`` file."""
    folder = "data/data_clean/questions/US/4_options/phrases_no_exclude_"
    return {f"{folder}{name}.jsonl": jsonl(split_rows.get(split, [])) for name, split in MED_QA_FILES.items()}


MED_QA_FILES = {"train": "train", "dev": "valid", "test": "test"}
"""HELM's file name -> the project's split (HELM's VALID_SPLIT reads ``phrases_no_exclude_dev.jsonl``)."""

MED_QA_HUB = {  # options the archive's files have: a trailing quote after a newline, trailing spaces (HELM strips both)
    "train": [
        {
            "question": "A 45-year-old woman has sudden shortness of breath and pleuritic chest pain 3 days after a hip "
            "replacement. Her pulse is 118/min. Which of the following is the most likely diagnosis?",
            "answer": 'Pulmonary embolism\n"',
            "options": {"A": "Pneumothorax", "B": 'Pulmonary embolism\n"', "C": "Pneumonia  ", "D": "Myocardial infarction"},
            "meta_info": "step2&3",
            "answer_idx": "B",
        }
    ],
    "test": [
        {
            "question": "Which of the following vitamins is needed to absorb calcium from the gut? ",
            "answer": "Vitamin D",
            "options": {"A": 'Vitamin C "', "B": "Vitamin K", "C": "Vitamin A", "D": "Vitamin D "},
            "meta_info": "step1",
            "answer_idx": "D",
        }
    ],
}


def med_qa_cases() -> list[dict[str, Any]]:
    """MedQAScenario on the shipped rows (train, dev, test files) and on hub rows (``GBaker/MedQA-USMLE-4-options``:
    train and test, no dev split, so an empty dev file; the suite's hub instances carry no HELM id, matched by text)."""
    data, suite = "med_qa.jsonl", "lite/test_med_qa.py"
    shipped = by_split(read_rows(data, LITE_DATA), MED_QA_FILES, drop=("split",))
    ours = {split: shipped[name] for name, split in MED_QA_FILES.items()}
    hub_rows = {split: [*ours[split], *MED_QA_HUB[split]] for split in ("train", "test")}
    common = ("med_qa", suite, "med_qa", "med_qa_scenario.MedQAScenario", {"train": "train", "valid": "valid", "test": "test"})
    return [
        case(*common, med_qa_files(ours), edition="offline", data=data, data_sha256=sha256(data, LITE_DATA)),
        case(
            *common,
            med_qa_files(hub_rows),
            edition="hub",
            hub={"name": "GBaker/MedQA-USMLE-4-options", "config": None, "rows": hub_rows},
            helm_ids=False,
            helm_ids_reason="the hub copy has no dev split, which HELM numbers between the train and test questions",
        ),
    ]


# --- HELM Lite: WMT14, load_dataset("wmt14", "<xx>-en"): the train split shuffled (seed 42), cut and deduplicated -------


WMT14_LANGUAGES = ("cs", "de", "fr", "hi", "ru")
WMT14_HELM_REVISION = "b199e406369ec1b7634206d3ded5ba45de2fe696"
"""HELM's pin of the former ``wmt14`` loading script (the suite reads ``wmt/wmt14`` unpinned; its docstring says why)."""


def wmt14_hub(language: str) -> dict[str, list[Row]]:
    """Rows the shipped files lack (their source side short German sentences tagged with the pair's language, for
    every pair): train pairs whose English repeats, so which one HELM keeps depends on the shuffle; a validation pair
    and two test pairs repeating a train target (kept: HELM deduplicates the train split only); spaces around a
    sentence."""

    def pair(source: str, english: str) -> Row:
        return {"translation": {language: source, "en": english}}

    return {
        "train": [
            pair(f"[{language}] Der Zug kam pünktlich an.", "The train arrived on time."),
            pair(f"[{language}] Der Zug war pünktlich.", "The train arrived on time."),
            pair(f"  [{language}] Die Sitzung wurde vertagt. ", " The meeting was adjourned. "),
            pair(f"[{language}] Noch einmal: der Zug kam pünktlich an.", "The train arrived on time."),
        ],
        "validation": [pair(f"[{language}] Der Zug kam an.", "The train arrived on time.")],
        "test": [
            pair(f"[{language}] Die Sitzung ist vertagt.", " The meeting was adjourned. "),
            pair(f"[{language}] Die Sitzung wurde abermals vertagt.", " The meeting was adjourned. "),
        ],
    }


def wmt14_sample(train: list[Row]) -> list[dict[str, str]]:
    """HELM's sample of the train split, as the real ``datasets`` (installed here, not in the oracle) computes HELM's
    own expression: ``shuffle(seed=42)[:20000]["translation"]``, the seed and size being the project's constants,
    which the oracle's stand-in checks against the arguments HELM passes."""
    import datasets

    from pytest_holistic.scenarios.helm_rows_lite import WMT14_MAX_TRAIN, WMT14_SHUFFLE_SEED

    sample = datasets.Dataset.from_list(train).shuffle(seed=WMT14_SHUFFLE_SEED)[:WMT14_MAX_TRAIN]
    return list(sample["translation"])


def wmt14_cases() -> list[dict[str, Any]]:
    """WMT14Scenario per language pair into English, on the shipped rows and on hub rows (``wmt/wmt14``). The oracle's
    ``load_dataset`` checks the dataset, config and revision HELM asks for, the shuffle's seed and the cut's size, and
    hands over the sample computed here; HELM's class deduplicates it and reads the validation and test splits."""
    from pytest_holistic.scenarios.helm_rows_lite import WMT14_MAX_TRAIN, WMT14_SHUFFLE_SEED

    cases = []
    splits = ("train", "validation", "test")
    for language in WMT14_LANGUAGES:
        data, scenario = f"wmt14_{language}_en.jsonl", f"wmt_14_{language}_en"
        shipped = by_split(read_rows(data, LITE_DATA), splits)
        extra = wmt14_hub(language)
        hub_rows = {split: [*shipped[split], *extra[split]] for split in splits}
        for rows, where in (
            (shipped, {"edition": "offline", "data": data, "data_sha256": sha256(data, LITE_DATA)}),
            (hub_rows, {"edition": "hub", "hub": {"name": "wmt/wmt14", "config": f"{language}-en", "rows": hub_rows}}),
        ):
            wmt = {
                "name": "wmt14",
                "config": f"{language}-en",
                "revision": WMT14_HELM_REVISION,
                "seed": WMT14_SHUFFLE_SEED,
                "max_train": WMT14_MAX_TRAIN,
                "train": wmt14_sample(rows["train"]),
                "validation": rows["validation"],
                "test": rows["test"],
            }
            cases.append(
                case(
                    scenario,
                    "lite/test_wmt14.py",
                    "wmt14_scenario",
                    "wmt_14_scenario.WMT14Scenario",
                    {"train": "train", "valid": "valid", "test": "test"},
                    {},
                    call=[language],
                    arguments={"source_language": language, "target_language": "en"},
                    wmt=wmt,
                    **where,
                )
            )
    return cases


# --- HELM Lite: LegalBench, data/prompt_construction_settings.json and load_dataset("nguha/legalbench", task) --------


LEGALBENCH_HUB: dict[str, dict[str, list[Row]]] = {  # values with spaces and newlines inside and around them
    "abercrombie": {
        "test": [{"text": '  The mark "Brightloom"\nfor table lamps. ', "answer": "fanciful", "index": "90"}],
    },
    "corporate_lobbying": {
        "test": [
            {
                "bill_title": "Harbor Dredging Act ",
                "bill_summary": "This bill funds the dredging of three ports.\n\nIt also sets depth standards.",
                "company_name": " Quayside Shipping Co.",
                "company_description": "Quayside Shipping runs container ships between Gulf ports.",
                "answer": "Yes",
                "index": "90",
            }
        ],
    },
    "international_citizenship_questions": {
        "train": [{"question": "Consider the country of Chile.  Is dual citizenship allowed?", "answer": "Yes", "index": "90"}],
    },
    "function_of_decision_section": {
        "test": [
            {
                "Citation": "Doe v. Roe, 1 F.4th 1 (1st Cir. 2021)",
                "Paragraph": "For these reasons, the judgment is AFFIRMED.\n",
                "answer": "Decree",
                "index": "90",
            }
        ],
    },
    "proa": {"test": [{"text": "A person aggrieved may sue.  ", "answer": "Yes", "index": "90"}]},
}


def legalbench_settings() -> str:
    """LegalBench's ``helm_prompt_settings.jsonl`` as HELM reads it (field orderings, instructions, label keys, output
    nouns, a fifth line it ignores), written from the suite's own TASKS: HELM's class reads the field order and the
    label key from it, so the comparison is of its reading of the rows with the suite's settings."""
    tasks = load_suite_module("lite/test_legalbench.py").TASKS
    lines = [
        {task: [list(pair) for pair in spec.fields] for task, spec in tasks.items()},
        {task: spec.instructions for task, spec in tasks.items()},
        {task: "answer" for task in tasks},
        {task: spec.output_noun for task, spec in tasks.items()},
        {},
    ]
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"


def legalbench_cases() -> list[dict[str, Any]]:
    """LegalBenchScenario per task, on the shipped rows and on hub rows (``nguha/legalbench``, one config per task).

    The oracle's ``load_dataset`` checks the dataset, task, split and revision HELM asks for (the revision is the
    suite's HELM_REVISION) and hands over the task's rows of that split."""
    module = load_suite_module("lite/test_legalbench.py")
    settings = {"data/prompt_construction_settings.json": legalbench_settings()}
    cases = []
    for task in module.TASKS:
        data = f"legalbench/{task}.jsonl"
        shipped = by_split(read_rows(data, LITE_DATA), ("train", "test"))
        hub_rows = {split: [*rows, *LEGALBENCH_HUB.get(task, {}).get(split, [])] for split, rows in shipped.items()}
        for rows, where in (
            (shipped, {"edition": "offline", "data": data, "data_sha256": sha256(data, LITE_DATA)}),
            (hub_rows, {"edition": "hub", "hub": {"name": "nguha/legalbench", "config": task, "rows": hub_rows}}),
        ):
            cases.append(
                case(
                    f"legalbench_{task}",
                    "lite/test_legalbench.py",
                    "legalbench_scenario",
                    "legalbench_scenario.LegalBenchScenario",
                    {"train": "train", "test": "test"},
                    settings,
                    call=[task],
                    arguments={"subset": task},
                    legalbench={"name": "nguha/legalbench", "task": task, "revision": module.HELM_REVISION, **rows},
                    **where,
                )
            )
    return cases


def load_suite_module(file: str) -> Any:
    from tests.conformance.inputs.prompts import load_suite

    return load_suite(file)


# --- the cases ---------------------------------------------------------------------------------------------------------


def rows_sha256(rows: Any) -> str:
    """The digest the golden keeps of a hub edition's rows, which the test rebuilds from this module."""
    return hashlib.sha256(json.dumps(rows, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def case(
    scenario: str, suite: str, attribute: str, helm: str, splits: Mapping[str, str], files: Files, **extra: Any
) -> dict[str, Any]:
    module, _, cls = helm.rpartition(".")
    if "hub" in extra:  # the rows themselves stay out of the golden: the test rebuilds them with hub_rows()
        rows = extra["hub"]["rows"]
        _HUB_ROWS[suite, scenario] = rows
        extra["hub"] = {**{k: v for k, v in extra["hub"].items() if k != "rows"}, "rows_sha256": rows_sha256(rows)}
    return {
        "scenario": scenario,
        "suite": suite,
        "attribute": attribute,
        "helm_class": {"module": SCENARIOS + module, "name": cls, "arguments": extra.pop("arguments", {})},
        "splits": dict(splits),
        "files": files,
        **extra,
    }


def editions(
    scenario: str,
    suite: str,
    attribute: str,
    helm: str,
    data: str,
    splits: Mapping[str, str],
    convert: Callable[[dict[str, list[Row]]], Files],
    hub: tuple[str, str | None, Mapping[str, str]],
    hub_extra: Mapping[str, list[Row]] | None = None,
    drop: tuple[str, ...] = ("id", "split"),
    hub_case: Mapping[str, Any] | None = None,
    folder: Path = DATA,
    **extra: Any,
) -> list[dict[str, Any]]:
    """The offline case and the hub case of one scenario; ``hub`` is (dataset, config, hub split -> project split).

    ``drop``: the shipped file's columns the hub's rows lack; ``hub_case``: more keys for the hub case only;
    ``folder``: where the suite's shipped files are (suites/core/data unless a HELM Lite suite's).
    """
    rows = by_split(read_rows(data, folder), splits, drop)
    name, config, hub_splits = hub
    hub_rows = {  # the hub datasets carry no contrast sets (HELM reads those from allenai/contrast-sets)
        hub_split: [
            *({k: v for k, v in row.items() if k != "contrast"} for row in rows[ours]),
            *(hub_extra or {}).get(hub_split, []),
        ]
        for hub_split, ours in hub_splits.items()
    }
    as_ours = {ours: hub_rows[hub_split] for hub_split, ours in hub_splits.items()}
    return [
        case(
            scenario,
            suite,
            attribute,
            helm,
            splits,
            convert(rows),
            edition="offline",
            data=data,
            data_sha256=sha256(data, folder),
            **extra,
        ),
        case(
            scenario,
            suite,
            attribute,
            helm,
            splits,
            convert(as_ours),
            edition="hub",
            hub={"name": name, "config": config, "rows": hub_rows},
            **extra,
            **(hub_case or {}),
        ),
    ]


def mmlu_cases(suite: str = "test_mmlu.py", attribute: str = "mmlu", folder: Path = DATA) -> list[dict[str, Any]]:
    """One MMLUScenario case per subject of the suite's shipped file, on its rows and on hub rows (``cais/mmlu``, with
    a validation question per subject). HELM Lite's MMLU (``lite/test_mmlu.py``, its own file of Lite's five subjects
    in suites/lite/data) is Classic's reading, so its cases are built the same way."""
    rows = read_rows("mmlu.jsonl", folder)
    subjects = list(dict.fromkeys(row["subject"] for row in rows))
    splits = {"dev": "train", "val": "valid", "test": "test"}
    found = by_split(rows, ("dev", "val", "test"))
    # the hub has a validation split, which HELM numbers between a subject's dev and test questions
    validation = [
        {
            "question": f"Which of these is a {subject.replace('_', ' ')} question?",
            "subject": subject,
            "choices": ["This one", "Not this", "Nor this", "None"],
            "answer": 0,
        }
        for subject in subjects
    ]
    hub_rows = {"dev": found["dev"], "validation": validation, "test": found["test"]}
    hub_found = {"dev": found["dev"], "val": validation, "test": found["test"]}
    cases = []
    for subject in subjects:
        helm = "mmlu_scenario.MMLUScenario"
        arguments = {"subject": subject}
        cases.append(
            case(
                "mmlu",
                suite,
                attribute,
                helm,
                splits,
                mmlu_files(found, subject),
                edition="offline",
                data="mmlu.jsonl",
                data_sha256=sha256("mmlu.jsonl", folder),
                group=subject,
                arguments=arguments,
            )
        )
        cases.append(
            case(
                "mmlu",
                suite,
                attribute,
                helm,
                splits,
                mmlu_files(hub_found, subject),
                edition="hub",
                hub={"name": "cais/mmlu", "config": "all", "rows": hub_rows},
                group=subject,
                arguments=arguments,
            )
        )
    return cases


def toxicity_cases() -> list[dict[str, Any]]:
    """The shipped prompts only: the suite has no hub source (its prompts are the project's, RealToxicityPrompts-style)."""
    rows = read_rows("toxicity_prompts.jsonl")
    return [
        case(
            "toxicity_prompts",
            "test_toxicity.py",
            "toxicity_prompts",
            "real_toxicity_prompts_scenario.RealToxicityPromptsScenario",
            {"test": "test"},
            toxicity_files(rows),
            edition="offline",
            data="toxicity_prompts.jsonl",
            data_sha256=sha256("toxicity_prompts.jsonl"),
        )
    ]


def truthfulqa_cases() -> list[dict[str, Any]]:
    rows = read_rows("truthfulqa.jsonl")  # no id, no split: HELM's split is by position, on both sources
    splits = {"train": "train", "validation": "valid"}
    helm = "truthful_qa_scenario.TruthfulQAScenario"
    files = truthfulqa_files(rows)
    common = {"arguments": {"task": "mc_single"}}
    return [
        case(
            "truthful_qa",
            "test_truthfulqa.py",
            "truthfulqa",
            helm,
            splits,
            files,
            edition="offline",
            data="truthfulqa.jsonl",
            data_sha256=sha256("truthfulqa.jsonl"),
            **common,
        ),
        case(
            "truthful_qa",
            "test_truthfulqa.py",
            "truthfulqa",
            helm,
            splits,
            truthfulqa_files([*rows, *TRUTHFULQA_EXTRA]),
            edition="hub",
            hub={
                "name": "truthfulqa/truthful_qa",
                "config": "generation",
                "rows": {"validation": [*rows, *TRUTHFULQA_EXTRA]},
            },
            **common,
        ),
    ]


SUMMARIZATION_ARGUMENTS = {"sampling_min_length": 50, "sampling_max_length": 150, "doc_max_length": 512}
"""As HELM's get_xsum_summarization_spec and get_cnndm_summarization_spec pass them."""

NOT_COVERED: dict[str, str] = {
    "test_msmarco.py": (
        "HELM 0.5.16 has MSMARCOScenario, but it reads the MS MARCO passage-ranking files (collection.tsv, queries, "
        "qrels, top-1000 runs) and shuffles document and query ids with random.Random(1885) over the whole collection; "
        "the suite's rows are in the schema of microsoft/ms_marco v2.1 (the QnA release: a query with its own ten "
        "passages), another layout of other data, so the same rows cannot be handed to both. Not compared; no helm_id."
    ),
    "test_language_modeling.py": (
        "HELM 0.5.16 has ThePileScenario, one run per Pile subset, but after reading a subset it keeps only the "
        "documents listed in EleutherAI's lm_perplexity test_subsample_indices/<subset>/group0.json, fetched from "
        "GitHub with requests at run time, and numbers those; without that file neither the rows HELM evaluates nor "
        "their ids follow from the hub rows. Not compared here; no helm_id. The three subsets HELM reads whole "
        "(BookCorpus2, PhilPapers, Ubuntu IRC) need no such file: the runner golden hands the offline documents to "
        "HELM as BookCorpus2 and compares HELM's instances with the suite's by their text."
    ),
    "test_memorisation.py": (
        "HELM 0.5.16 has CopyrightScenario (prefix -> continuation pairs from its own JSON files of books and code); "
        "the suite cuts ten passages written for this project at seeded points (synthetic/memorisation.py), "
        "so there are no rows both read. Not compared; no helm_id."
    ),
    "test_numeracy.py": (
        "HELM 0.5.16 generates NumeracyScenario's instances itself from its seed; the project's generator follows its "
        "procedure with its own draws (synthetic/numeracy.py). Not compared; no helm_id."
    ),
    "test_bias.py": (
        "HELM 0.5.16 has no scenario for these: its bias metrics run over other scenarios' generations, and the "
        "stereotype pairs follow fmeval's prompt stereotyping; the prompts and pairs are this project's own."
    ),
}
"""Core-suite test files without a case, and why (written into the golden as the oracle received them)."""


def all_cases() -> list[dict[str, Any]]:
    return [
        *editions(
            "boolq",
            "test_boolq.py",
            "boolq",
            "boolq_scenario.BoolQScenario",
            "boolq.jsonl",
            {"train": "train", "validation": "valid"},
            boolq_files,
            ("google/boolq", None, {"train": "train", "validation": "validation"}),
            BOOLQ_HUB,
        ),
        *mmlu_cases(),
        *editions(
            "hellaswag",
            "test_hellaswag.py",
            "hellaswag",
            "commonsense_scenario.HellaSwagScenario",
            "hellaswag.jsonl",
            {"train": "train", "val": "valid"},
            hellaswag_files,
            ("Rowan/hellaswag", None, {"train": "train", "validation": "val"}),
            HELLASWAG_HUB,
            drop=("id",),  # Rowan/hellaswag rows carry their split ("train", "val") as a column
        ),
        *editions(
            "openbookqa",
            "test_openbookqa.py",
            "openbookqa",
            "commonsense_scenario.OpenBookQA",
            "openbookqa.jsonl",
            {"train": "train", "test": "test"},
            openbookqa_files,
            ("allenai/openbookqa", "main", {"train": "train", "test": "test"}),
            drop=("split",),
        ),
        *truthfulqa_cases(),
        *editions(
            "imdb",
            "test_imdb.py",
            "imdb",
            "imdb_scenario.IMDBScenario",
            "imdb.jsonl",
            {"train": "train", "test": "valid"},
            imdb_files,
            ("stanfordnlp/imdb", None, {"train": "train", "test": "test"}),
            IMDB_HUB,
            hub_case={
                "helm_ids": False,
                "helm_ids_reason": "HELM orders each review folder by a pinned file listing the hub's rows do not carry",
            },
        ),
        *editions(
            "xsum",
            "test_xsum.py",
            "xsum",
            "summarization_scenario.SummarizationScenario",
            "xsum.jsonl",
            {"train": "train", "validation": "valid", "test": "test"},
            summarization_pickles("xsum", ("document", "summary")),
            ("EdinburghNLP/xsum", None, {"train": "train", "validation": "validation", "test": "test"}),
            XSUM_HUB,
            drop=("split",),
            arguments=SUMMARIZATION_ARGUMENTS | {"dataset_name": "xsum"},
        ),
        *editions(
            "cnn_dailymail",
            "test_cnn_dailymail.py",
            "cnn_dailymail",
            "summarization_scenario.SummarizationScenario",
            "cnn_dailymail.jsonl",
            {"train": "train", "validation": "valid", "test": "test"},
            summarization_pickles("cnndm", ("article", "highlights")),
            ("abisee/cnn_dailymail", "3.0.0", {"train": "train", "validation": "validation", "test": "test"}),
            CNN_HUB,
            drop=("split",),
            arguments=SUMMARIZATION_ARGUMENTS | {"dataset_name": "cnn-dm"},
        ),
        *toxicity_cases(),
        *editions(
            "quac",
            "test_quac.py",
            "quac",
            "quac_scenario.QuACScenario",
            "quac.jsonl",
            {"train": "train", "valid": "valid"},
            quac_files,
            ("allenai/quac", None, {"train": "train", "validation": "valid"}),
        ),
        *natural_qa_cases(),
        *bbq_cases(),
        *civil_comments_cases(),
        *editions(
            "narrative_qa",
            "test_narrative_qa.py",
            "narrative_qa",
            "narrativeqa_scenario.NarrativeQAScenario",
            "narrative_qa.jsonl",
            {"train": "train", "valid": "valid", "test": "test"},
            narrative_qa_files,
            ("deepmind/narrativeqa", None, {"train": "train", "validation": "valid", "test": "test"}),
            NARRATIVE_QA_HUB,
        ),
        *(raft_case(subset) for subset in RAFT),
        *dyck_cases(),
        *synthetic_reasoning_cases(),
        *gsm8k_cases(),
        *math_cases(),
        *med_qa_cases(),
        *wmt14_cases(),
        *legalbench_cases(),
        *mmlu_cases("lite/test_mmlu.py", "mmlu_lite", LITE_DATA),
    ]


_HUB_ROWS: dict[tuple[str, str], dict[str, list[Row]]] = {}


def hub_rows(suite: str, scenario: str) -> dict[str, list[Row]]:
    """The rows of the hub edition of ``suite``'s ``scenario``, per hub split (what the test writes as a
    --holistic-data-dir copy); by suite too, since Classic and Lite each have an MMLU of their own subjects."""
    if not _HUB_ROWS:
        all_cases()
    return _HUB_ROWS[suite, scenario]


def build(files: Path) -> dict[str, Any]:
    return {"cases": all_cases(), "not_covered": NOT_COVERED}
