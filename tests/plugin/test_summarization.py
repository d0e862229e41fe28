"""A summarisation suite end to end on the tiny GPT-2: the metrics are reported, and models not given are one-line skips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_holistic.metrics.summarization import data_stats

ROWS = [
    {
        "id": "a1",
        "split": "test",
        "article": "The mayor opened the new bridge on Monday. The bridge cost twelve million dollars.",
        "highlights": "The mayor opened a bridge.\nIt cost twelve million dollars.",
    },
    {
        "id": "a2",
        "split": "test",
        "article": "The town team won the cup on Saturday. Thousands of fans watched the final.",
        "highlights": "The town team won the cup.",
    },
    {
        "id": "t1",
        "split": "train",
        "article": "The capital of France is Paris. It is a large city.",
        "highlights": "Paris is the capital of France.",
    },
]

SUITE = """
import pytest
from pytest_holistic import Fields, Scenario, jsonl

news = Scenario("news", local=jsonl("news.jsonl", Fields(input="article", references="highlights")), split="test")

@pytest.mark.holistic(news, perturbations=False, input_prefix="###\\nArticle: ", input_suffix="\\n\\n",
                      output_prefix="Summarize the above article in 3 sentences.\\n", output_suffix="\\n",
                      max_train_instances=1, max_tokens=12, stop=("###",),
                      metrics=("rouge_2", "summarization_coverage", "summarization_density", "summarization_compression",
                               "meteor", "bertscore_f1", "summac", "qafacteval"))
def test_news(completion):
    pass
"""


def _suite(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("news.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    pytester.makepyfile(test_news=SUITE)


@pytest.mark.parametrize("wordnet", ["as installed", "hidden"])
def test_summarization_metrics_are_reported_and_missing_models_are_one_line_skips(
    pytester: pytest.Pytester, tiny_gpt2: Path, read_report, monkeypatch: pytest.MonkeyPatch, wordnet: str
) -> None:
    if wordnet == "hidden":  # a machine without the optional system package: only METEOR's line changes
        monkeypatch.setenv("WNSEARCHDIR", str(pytester.mkdir("no-wordnet")))
    _suite(pytester)
    result = pytester.runpytest("--model", str(tiny_gpt2))
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "  skipped  bertscore_f1 not scored: BERTScore needs a local encoder folder: pass --holistic-bertscore-model *",
            "  skipped  qafacteval not scored: QAFactEval needs a scorer: pass --holistic-qafacteval-scorer MODULE:FUNCTION, *",
            "  skipped  summac not scored: SummaC needs an NLI classifier: pass --holistic-summac-model hf:FOLDER",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    meteor = _meteor_runs_here()
    assert not (meteor and wordnet == "hidden")
    if not meteor:  # WordNet is an optional system package: without it METEOR is one more one-line skip
        result.stdout.fnmatch_lines(["  skipped  meteor not scored: METEOR needs WordNet*apt-get install*"])
    (run,) = read_report(pytester.path, "tiny-gpt2")["runs"]
    assert len(run["skipped"]) == (3 if meteor else 4) and all("\n" not in line for line in run["skipped"])
    assert not {"bertscore_f1", "summac", "qafacteval"} & set(run["metrics"])
    records = {record["instance"]["id"]: record for record in run["instances"]}
    articles = {row["id"]: row["article"] for row in ROWS}
    for key, record in records.items():
        coverage, density, compression = data_stats(record["completion"]["text"].strip(), articles[key])
        assert record["scores"]["summarization_coverage"] == pytest.approx(coverage)
        assert record["scores"]["summarization_density"] == pytest.approx(density)
        assert record["scores"]["summarization_compression"] == pytest.approx(compression)
        assert (0.0 <= record["scores"]["meteor"] <= 1.0) if meteor else "meteor" not in record["scores"]
    mean = sum(record["scores"]["summarization_density"] for record in records.values()) / 2
    assert run["metrics"]["summarization_density"]["value"] == pytest.approx(mean)
    assert run["metrics"]["rouge_2"]["family"] == "accuracy"
    if meteor:
        assert run["scorers"]["meteor"]["name"].startswith("nltk meteor_score")


def _meteor_runs_here() -> bool:
    from pytest_holistic.metrics.summarization_scorers import meteor_unavailable

    return meteor_unavailable() is None


def test_a_bertscore_folder_without_a_model_is_a_usage_error(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    _suite(pytester)
    pytester.mkdir("empty")
    result = pytester.runpytest("--model", str(tiny_gpt2), "--holistic-bertscore-model", "empty")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--holistic-bertscore-model = 'empty': *is not a model folder with a config.json*"])
