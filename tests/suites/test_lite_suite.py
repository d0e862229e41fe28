"""The shipped HELM Lite suite: every Lite scenario collected, run offline on the embedded model, and read from hub copies.

The expectations come from HELM Lite's run entries (run_entries_lite_20240424.conf) and its schema's main metrics
(schema_lite.yaml), not from the suite files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# HELM Lite's leaderboard columns -> (the run here, its main metric in HELM's schema_lite.yaml).
LITE: dict[str, tuple[str, str]] = {
    "NarrativeQA": ("narrative_qa", "f1_score"),
    "NaturalQuestions (open-book)": ("natural_qa_openbook_longans", "f1_score"),
    "NaturalQuestions (closed-book)": ("natural_qa_closedbook", "f1_score"),
    "OpenbookQA": ("openbookqa", "exact_match"),
    "MMLU": ("mmlu", "exact_match"),
    "MATH": ("math_chain_of_thought", "math_equiv_chain_of_thought"),
    "GSM8K": ("gsm", "final_number_exact_match"),
    "LegalBench": ("legalbench_abercrombie", "quasi_exact_match"),
    "MedQA": ("med_qa", "quasi_exact_match"),
    "WMT 2014": ("wmt_14_de_en", "bleu_4"),
}
LEGALBENCH_TASKS = (
    "abercrombie", "corporate_lobbying", "international_citizenship_questions", "function_of_decision_section", "proa",
)  # fmt: skip
WMT14_LANGUAGES = ("cs", "de", "fr", "hi", "ru")
EVERY_RUN = sorted(
    {run for run, _ in LITE.values()} | {f"legalbench_{task}" for task in LEGALBENCH_TASKS}
    | {f"wmt_14_{language}_en" for language in WMT14_LANGUAGES}
)  # fmt: skip
MMLU_SUBJECTS = {"abstract_algebra", "college_chemistry", "computer_security", "econometrics", "us_foreign_policy"}
MATH_SUBJECTS = {
    "algebra", "counting_and_probability", "geometry", "intermediate_algebra", "number_theory", "prealgebra", "precalculus",
}  # fmt: skip


def _pytest(*args: str, timeout: int = 1500) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", *args, "-q", "-p", "no:cacheprovider"]
    return subprocess.run(command, check=False, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _report(folder: Path) -> dict[str, dict]:
    (path,) = folder.glob("*/latest/report.json")
    return {run["scenario"]: run for run in json.loads(path.read_text())["runs"]}


def test_collection_lists_every_lite_scenario_with_its_subjects() -> None:
    completed = _pytest("suites/lite", "--collect-only", "-m", "helm_lite")
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    items = [line for line in completed.stdout.splitlines() if "::" in line]
    for test in ("test_narrative_qa", "test_natural_qa_openbook_longans", "test_natural_qa_closedbook", "test_openbookqa"):
        assert any(f"::{test}[" in item for item in items), test
    mmlu = {item.split("[", 1)[1].rsplit("-", 1)[0] for item in items if "::test_mmlu[" in item}
    assert mmlu == MMLU_SUBJECTS
    math = _pytest("suites/lite/test_math.py", "--collect-only", "-k", "geometry")
    assert math.returncode == 0 and math.stdout.count("::test_math[geometry-test-") == 2, math.stdout[-2000:]
    for test in [f"test_legalbench_{task}" for task in LEGALBENCH_TASKS] + [f"test_wmt14_{x}_en" for x in WMT14_LANGUAGES]:
        assert any(f"::{test}[" in item for item in items), test
    mathematical = _pytest("suites/lite", "--collect-only", "-m", "mathematical_reasoning")
    selected = {line.split("::")[1].split("[")[0] for line in mathematical.stdout.splitlines() if "::" in line}
    assert selected == {"test_gsm8k", "test_math"}


def test_core_and_lite_run_in_one_session_without_a_module_clash() -> None:
    """Both suites have test_narrative_qa.py and friends: as packages they collect side by side."""
    completed = _pytest("suites", "--collect-only", "-k", "narrative_qa")
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    files = {line.split("::")[0] for line in completed.stdout.splitlines() if "::" in line}
    assert files == {"suites/core/test_narrative_qa.py", "suites/lite/test_narrative_qa.py"}


@pytest.mark.slow
def test_lite_suite_on_the_embedded_model_reports_every_scenario_and_its_helm_metrics(tmp_path: Path) -> None:
    completed = _pytest(
        "suites/lite", "--holistic-max-instances", "2", "--holistic-report-dir", str(tmp_path),
        "--holistic-cache-dir", str(tmp_path / "cache"),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    runs = _report(tmp_path)
    assert sorted(runs) == EVERY_RUN
    for column, (name, main) in LITE.items():
        run = runs[name]
        assert set(run["outcomes"]) == {"passed"} and run["source"] == "local", column
        stat = run["metrics"][main]
        assert stat["family"] == "accuracy" and stat["value"] is not None, (column, main)
        assert stat["ci95"][0] <= stat["value"] <= stat["ci95"][1], column
        assert run["metrics"]["runtime_s"]["value"] is not None, column
    assert {"exact_match_indicator", "final_number_exact_match"} <= set(runs["gsm"]["metrics"])
    assert {"rouge_l", "bleu_1", "bleu_4"} <= set(runs["narrative_qa"]["metrics"])
    for name in EVERY_RUN:
        assert set(runs[name]["outcomes"]) == {"passed"}, name
    for name in ("narrative_qa", "openbookqa", "mmlu"):  # HELM Lite computes no calibration, bias or toxicity
        assert not {"ece_10_bin", "toxicity", "bias_representation_gender"} & set(runs[name]["metrics"]), name


# -- the hub sources, read from local copies in the hub's layout (--holistic-data-dir) ----------------------------------


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _gsm8k(split: str, count: int) -> list[dict]:
    return [
        {
            "question": f"Ann has {k} {split} apples and buys 2 more. How many now?",
            "answer": f"{k}+2=<<{k}+2={k + 2}>>{k + 2}\n#### {k + 2}",
        }
        for k in range(count)
    ]


def _math(split: str) -> list[dict]:
    rows = []
    for subject, kind in (("algebra", "Algebra"), ("geometry", "Geometry")):
        for level in (1, 1, 2):
            k = len(rows)
            rows.append(
                {
                    "problem": f"What is ${k} + {level}$ ({split} {subject})?",
                    "level": f"Level {level}",
                    "type": kind,
                    "solution": f"We add: ${k} + {level} = \\boxed{{{k + level}}}$.",
                }
            )
    return rows


def _mmlu(split: str, count: int) -> list[dict]:
    return [
        {"question": f"{subject} {split} question {k}?", "subject": subject, "choices": ["w", "x", "y", "z"], "answer": k % 4}
        for subject in ("abstract_algebra", "econometrics", "anatomy")
        for k in range(count)
    ]


def test_hub_sources_read_local_copies_in_the_hubs_layout(tmp_path: Path) -> None:
    """GSM8K, MATH and MMLU from copies in openai/gsm8k's, hendrycks/competition_math's and cais/mmlu's layouts:
    MATH keeps level 1 only, per subject; MMLU keeps Lite's subjects only; every instance carries HELM's id."""
    data = tmp_path / "datasets"
    _write(data / "openai" / "gsm8k" / "main" / "train.jsonl", _gsm8k("train", 4))
    _write(data / "openai" / "gsm8k" / "main" / "test.jsonl", _gsm8k("test", 4))
    for split in ("train", "test"):
        _write(data / "hendrycks" / "competition_math" / f"{split}.jsonl", _math(split))
    for split, count in (("dev", 5), ("validation", 1), ("test", 2)):
        _write(data / "cais" / "mmlu" / "all" / f"{split}.jsonl", _mmlu(split, count))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": " The answer is 5. $\\boxed{5}$"}))
    completed = _pytest(
        "suites/lite/test_gsm8k.py", "suites/lite/test_math.py", "suites/lite/test_mmlu.py", "--model", f"scripted:{script}",
        "--holistic-source", "hub", "--holistic-data-dir", str(data), "--holistic-report-dir", str(tmp_path / "reports"),
        "--holistic-cache-dir", str(tmp_path / "cache"),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    runs = _report(tmp_path / "reports")
    assert {run["source"] for run in runs.values()} == {"hub"}
    gsm = runs["gsm"]["instances"]
    assert [record["instance"]["helm_id"] for record in gsm] == ["id4", "id5", "id6", "id7"]  # after HELM's 4 train rows
    math = runs["math_chain_of_thought"]["instances"]
    assert sorted(record["instance"]["group"] for record in math) == ["algebra", "algebra", "geometry", "geometry"]
    assert {record["instance"]["helm_id"] for record in math} == {"id2", "id3"}  # per subject: 2 level-1 train rows first
    mmlu = runs["mmlu"]["instances"]
    assert sorted(record["instance"]["group"] for record in mmlu) == ["abstract_algebra"] * 2 + ["econometrics"] * 2
    # The scripted answer's final number and boxed answer are 5: the GSM8K row whose answer is 5 (k = 3) and the MATH
    # row whose solution boxes 5 (geometry, k = 4, level 1) match, and nothing else does.
    assert [record["scores"]["final_number_exact_match"] for record in gsm] == [0.0, 0.0, 0.0, 1.0]
    assert sorted(record["scores"]["math_equiv_chain_of_thought"] for record in math) == [0.0, 0.0, 0.0, 1.0]


def _wmt14(language: str, split: str, count: int) -> list[dict]:
    # Training targets repeat ("target 0" twice): HELM keeps the first pair of each target after its shuffle.
    return [{"translation": {language: f"{language} {split} {k}", "en": f"{split} target {k % 3}"}} for k in range(count)]


def test_hub_sources_of_medqa_wmt14_and_legalbench_read_local_copies(tmp_path: Path) -> None:
    """MedQA, the five WMT14 pairs (train sampled as HELM samples it, one pair per English target) and the five
    LegalBench tasks from copies in GBaker/MedQA-USMLE-4-options', wmt/wmt14's and nguha/legalbench's layouts."""
    data = tmp_path / "datasets"
    options = {"A": "alpha", "B": "beta", "C": 'gamma"', "D": "delta"}
    for split, count in (("train", 3), ("test", 2)):
        rows = [
            {"question": f"{split} q{k}?", "answer": "beta", "options": options, "meta_info": "step1", "answer_idx": "B"}
            for k in range(count)
        ]
        _write(data / "GBaker" / "MedQA-USMLE-4-options" / f"{split}.jsonl", rows)
    for language in WMT14_LANGUAGES:
        for split, count in (("train", 6), ("validation", 1), ("test", 2)):
            _write(data / "wmt" / "wmt14" / f"{language}-en" / f"{split}.jsonl", _wmt14(language, split, count))
    columns = {
        "abercrombie": ("text",), "corporate_lobbying": ("bill_title", "bill_summary", "company_name", "company_description"),
        "international_citizenship_questions": ("question",), "function_of_decision_section": ("Citation", "Paragraph"),
        "proa": ("text",),
    }  # fmt: skip
    for task, names in columns.items():
        for split, count in (("train", 2), ("test", 2)):
            rows = [{**{name: f"{task} {name} {k}" for name in names}, "answer": "Yes", "index": str(k)} for k in range(count)]
            _write(data / "nguha" / "legalbench" / task / f"{split}.jsonl", rows)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": " Yes"}))
    completed = _pytest(
        "suites/lite/test_med_qa.py", "suites/lite/test_wmt14.py", "suites/lite/test_legalbench.py", "--model",
        f"scripted:{script}", "--holistic-source", "hub", "--holistic-data-dir", str(data),
        "--holistic-report-dir", str(tmp_path / "reports"), "--holistic-cache-dir", str(tmp_path / "cache"),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    runs = _report(tmp_path / "reports")
    assert sorted(runs) == sorted(
        ["med_qa"] + [f"wmt_14_{x}_en" for x in WMT14_LANGUAGES] + [f"legalbench_{task}" for task in LEGALBENCH_TASKS]
    )
    assert {run["source"] for run in runs.values()} == {"hub"}
    medqa = runs["med_qa"]["instances"]
    assert len(medqa) == 2 and all("helm_id" not in record["instance"] for record in medqa)  # the copy has no dev split
    assert [ref["text"] for ref in medqa[0]["instance"]["references"]] == ["alpha", "beta", "gamma", "delta"]
    for language in WMT14_LANGUAGES:
        run = runs[f"wmt_14_{language}_en"]
        # 6 training pairs with 3 distinct targets: 3 kept, then 1 validation pair, then the 2 test pairs.
        assert [record["instance"]["helm_id"] for record in run["instances"]] == ["id4", "id5"], language
        assert run["source_provenance"]["sampled"]["train"].startswith("HELM's WMT14 training pairs")
    abercrombie = runs["legalbench_abercrombie"]["instances"]
    assert abercrombie[0]["instance"]["input"] == "Description: abercrombie text 0"
    assert runs["legalbench_proa"]["metrics"]["quasi_exact_match"]["value"] == 1.0  # every label is Yes, as answered


def test_two_models_compared_get_helm_lites_groups_and_mean_win_rate(tmp_path: Path) -> None:
    """Two scripted models on LegalBench and MMLU: the comparison averages LegalBench's five tasks into HELM Lite's one
    column and ranks the models by HELM's mean win rate over those columns, in leaderboard.json and the HTML page."""
    reports = []
    for name, answer in (("always-yes", " Yes"), ("always-b", " B")):
        script = tmp_path / f"{name}.json"
        script.write_text(json.dumps({"default": answer}))
        folder = tmp_path / "reports" / name
        completed = _pytest(
            "suites/lite/test_legalbench.py", "suites/lite/test_mmlu.py", "--model", f"scripted:{script}",
            "--holistic-report-dir", str(folder), "--holistic-cache-dir", str(tmp_path / "cache"),
        )  # fmt: skip
        assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
        (report,) = folder.glob("*/latest/report.json")
        reports.append(report)
    board_dir = tmp_path / "board"
    command = [sys.executable, "-m", "pytest_holistic", "report", *map(str, reports), "-o", str(board_dir)]
    completed = subprocess.run(command, check=False, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    board = json.loads((board_dir / "leaderboard.json").read_text())
    columns = {column["key"]: column for column in board["helm_groups"]["columns"]}
    assert sorted(columns) == ["legalbench", "mmlu"]
    assert columns["legalbench"]["runs"] == sorted(f"legalbench_{task}" for task in LEGALBENCH_TASKS)
    runs = {}
    for path in reports:
        payload = json.loads(path.read_text())
        runs[payload["model"]["name"]] = {run["scenario"]: run for run in payload["runs"]}
    for model, cells in board["helm_groups"]["cells"].items():
        own = runs[model.split(" ")[0]]
        tasks = [own[f"legalbench_{task}"]["metrics"]["quasi_exact_match"]["value"] for task in LEGALBENCH_TASKS]
        assert cells["legalbench"] == pytest.approx(sum(tasks) / len(tasks))
    rates = board["win_rates"]["helm"]
    assert set(rates) == set(board["helm_groups"]["cells"]) and all(0.0 <= rate <= 1.0 for rate in rates.values())
    html = (board_dir / "index.html").read_text()
    assert 'id="helm-groups"' in html and "legalbench" in html


def _shipped(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _as_hub(rows: list[dict], split: str | None, *, keep_id: bool = False) -> list[dict]:
    """The shipped rows of one split (None: every row) without the project's ``split`` column, and its ``id`` unless
    the hub dataset has one (NaturalQuestions, OpenBookQA), as the hub holds them."""
    dropped = ("split",) if keep_id else ("id", "split")
    return [{k: v for k, v in row.items() if k not in dropped} for row in rows if split is None or row.get("split") == split]


def test_whole_lite_suite_from_hub_copies_of_its_shipped_rows_gives_the_same_instances(tmp_path: Path) -> None:
    """`pytest suites/lite --holistic-source hub`, every dataset a copy in its hub layout made of the shipped rows: each
    run reads the hub source and evaluates the same inputs as the offline run (the shipped files are in the hubs' row
    schemas, so one mapping serves both)."""
    core, lite, data = ROOT / "suites" / "core" / "data", ROOT / "suites" / "lite" / "data", tmp_path / "datasets"
    narrative = _shipped(core / "narrative_qa.jsonl")
    for split in ("train", "test"):
        _write(data / "deepmind" / "narrativeqa" / f"{split}.jsonl", _as_hub(narrative, split))
    _write(data / "deepmind" / "narrativeqa" / "validation.jsonl", _as_hub(narrative, "train")[:1])
    _write(
        data / "google-research-datasets" / "natural_questions" / "dev" / "validation.jsonl",
        _as_hub(_shipped(core / "natural_qa.jsonl"), None, keep_id=True),
    )
    obqa = _shipped(core / "openbookqa.jsonl")
    for split in ("train", "test"):
        _write(data / "allenai" / "openbookqa" / "main" / f"{split}.jsonl", _as_hub(obqa, split, keep_id=True))
    mmlu = _shipped(lite / "mmlu.jsonl")
    _write(data / "cais" / "mmlu" / "all" / "dev.jsonl", _as_hub(mmlu, "dev"))
    _write(data / "cais" / "mmlu" / "all" / "test.jsonl", _as_hub(mmlu, "test"))
    _write(data / "cais" / "mmlu" / "all" / "validation.jsonl", _as_hub(mmlu, "dev")[:1])
    for split in ("train", "test"):
        _write(data / "openai" / "gsm8k" / "main" / f"{split}.jsonl", _as_hub(_shipped(lite / "gsm8k.jsonl"), split))
        _write(data / "hendrycks" / "competition_math" / f"{split}.jsonl", _as_hub(_shipped(lite / "math.jsonl"), split))
        _write(data / "GBaker" / "MedQA-USMLE-4-options" / f"{split}.jsonl", _as_hub(_shipped(lite / "med_qa.jsonl"), split))
        for task in LEGALBENCH_TASKS:
            _write(
                data / "nguha" / "legalbench" / task / f"{split}.jsonl",
                _as_hub(_shipped(lite / "legalbench" / f"{task}.jsonl"), split),
            )
    for language in WMT14_LANGUAGES:
        for split in ("train", "validation", "test"):
            rows = _as_hub(_shipped(lite / f"wmt14_{language}_en.jsonl"), split)
            _write(data / "wmt" / "wmt14" / f"{language}-en" / f"{split}.jsonl", rows)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": " A"}))
    inputs = {}
    for source in ("local", "hub"):
        completed = _pytest(
            "suites/lite", "--model", f"scripted:{script}", "--holistic-source", source, "--holistic-data-dir", str(data),
            "--holistic-report-dir", str(tmp_path / source), "--holistic-cache-dir", str(tmp_path / "cache"),
        )  # fmt: skip
        assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
        runs = _report(tmp_path / source)
        assert {run["source"] for run in runs.values()} == {source}
        inputs[source] = {name: sorted(r["instance"]["input"] for r in run["instances"]) for name, run in runs.items()}
    assert sorted(inputs["hub"]) == EVERY_RUN
    for name in EVERY_RUN:
        assert inputs["hub"][name] == inputs["local"][name], name
