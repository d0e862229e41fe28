"""NarrativeQA: questions about the summary of a book or film (HELM core scenario; main metric F1).

HELM (stanford-crfm/helm, run_specs/lite_run_specs.py ``get_narrativeqa_spec``, scenarios/narrativeqa_scenario.py)
uses the summaries-only setting: ``Passage: <summary>\\nQuestion: <question>?\\nAnswer:``, both human answers correct;
generation, 5 shots, ``max_tokens=100`` ("max 30 words"), stop at a newline; metrics exact match, quasi exact match,
F1, ROUGE-L, BLEU-1 and BLEU-4 (``get_open_ended_generation_metric_specs``); test split. As HELM, one question per
document and split is drawn (``one_question_per_document``: HELM's ``random.seed(0)`` draw, in HELM's order).

The hub source is ``deepmind/narrativeqa`` (no revision pinned: no commit of it could be verified in public code).
The shipped data/narrative_qa.jsonl holds 20 stories written for this project (5 train, 15 test) in the hub's row
schema (``document.summary.text``, ``question.text``, ``answers[].text``), each summary 80-100 words.
"""

from pathlib import Path

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows import narrative_qa_row, one_question_per_document

DATA = Path(__file__).parent / "data"  # anchored here: suites/lite imports this scenario

pytestmark = [pytest.mark.helm_core, pytest.mark.question_answering]

FIELDS = Fields(input="{summary}\nQuestion: {question}", prepare=narrative_qa_row)

HUB = hf("deepmind/narrativeqa", splits={"train": "train", "validation": "valid", "test": "test"}, fields=FIELDS)
narrative_qa = Scenario(
    "narrative_qa",
    local=one_question_per_document(jsonl(DATA / "narrative_qa.jsonl", FIELDS)),
    hub=one_question_per_document(HUB),
    split="test",
    train_split="train",
    helm=HelmIds(("train", "valid", "test")),
)


@pytest.mark.holistic(
    narrative_qa,
    adapter="generation",
    input_prefix="Passage: ",
    output_prefix="Answer: ",
    max_train_instances=5,
    local_max_train_instances=2,  # offline: two summaries keep the prompt short enough for the embedded model on a CPU
    max_tokens=100,
    stop=("\n",),
    perturbations=("robustness", "fairness"),
    metrics=(
        "f1_score",  # the main metric, then the rest of HELM's run spec (get_open_ended_generation_metric_specs)
        *metrics.HELM_OPEN_ENDED,
        *metrics.CALIBRATION,
        *metrics.HELM_BIAS,
        *metrics.HELM_TOXICITY,
    ),
)
def test_narrative_qa(completion, record):
    record(answered=bool(completion.text.strip()))
