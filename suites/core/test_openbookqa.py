"""OpenBookQA-style elementary science questions with four options (HELM core scenario; main metric exact match).

The shipped questions (data/openbookqa.jsonl) were written for this project in the row layout of the hub dataset
``allenai/openbookqa`` (config ``main``: id, question_stem, choices {text, label}, answerKey), plus the project's
``split`` column; ``--holistic-source hub`` evaluates the real test split with the train split as few-shot pool.
Adaptation as in HELM's commonsense run spec with method multiple_choice_joint: HELM's instructions, "Question: "
/ "Answer: ", five in-context examples, one generated token. (HELM classic v0.2.x ran OpenBookQA with
multiple_choice_separate_calibrated; HELM Lite and later classic releases ran it with multiple_choice_joint, as here.)
The hub revision is not pinned: no commit of allenai/openbookqa could be verified in public code.
"""

from pathlib import Path

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_mc import openbookqa_row

DATA = Path(__file__).parent / "data"  # anchored here: suites/lite imports this scenario

pytestmark = [pytest.mark.helm_core, pytest.mark.question_answering]

FIELDS = Fields(choices="choices", answer="answer", prepare=openbookqa_row)

openbookqa = Scenario(
    "openbookqa",
    local=jsonl(DATA / "openbookqa.jsonl", FIELDS),
    hub=hf("allenai/openbookqa", "main", splits={"train": "train", "test": "test"}, fields=FIELDS),
    split="test",
    train_split="train",
    helm=HelmIds(("train", "test")),  # HELM reads Main/train.jsonl, then Main/test.jsonl
)


@pytest.mark.holistic(
    openbookqa,
    adapter="multiple_choice_joint",
    instructions="The following are multiple choice questions (with answers) about common sense.\n",
    max_train_instances=5,
    perturbations=("robustness", "fairness"),
    metrics=(*metrics.HELM_EXACT_MATCH, *metrics.CALIBRATION, *metrics.HELM_TOXICITY),
)
def test_openbookqa(completion, record):
    # How often the model answers with one of the offered letters at all (format following).
    record(valid_letter=completion.predicted_index is not None)
