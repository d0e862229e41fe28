"""TruthfulQA-style questions about common misconceptions, one true option (HELM core scenario; main metric exact match).

The shipped questions (data/truthfulqa.jsonl) were written for this project in the row layout of the hub dataset
``truthfulqa/truthful_qa`` (config ``generation``: type, category, question, best_answer, correct_answers,
incorrect_answers, source: the columns of the CSV HELM reads); the rows carry no id and no split, as on the hub. HELM's split is reproduced on both sources: the first 20% of the rows
(``int(n * 0.2)``: 163 of the 817 real questions, 4 of the 20 shipped ones) are the few-shot pool, the rest are
evaluated; each row's id is its position (``truthful_qa-0007``). Options are HELM's: the incorrect answers, then the
best one, each stripped and ending in a period, rotated by ``ord(first letter of the best answer) % number of
options``, so the right letter varies. Adaptation as in HELM's ``truthful_qa:task=mc_single`` run spec:
multiple_choice_joint, no instructions, "Question: " / "Answer: ", five in-context examples.
The hub revision is not pinned: no commit of truthfulqa/truthful_qa could be verified in public code.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_mc import leading_train_split, truthfulqa_row

pytestmark = [pytest.mark.helm_core, pytest.mark.question_answering]

FIELDS = Fields(choices="choices", answer="answer", prepare=truthfulqa_row)

truthfulqa = Scenario(
    "truthful_qa",
    local=leading_train_split(jsonl("data/truthfulqa.jsonl", FIELDS), fraction=0.2, id_prefix="truthful_qa"),
    hub=leading_train_split(
        hf("truthfulqa/truthful_qa", "generation", splits={"validation": "validation"}, fields=FIELDS),
        fraction=0.2,
        id_prefix="truthful_qa",
    ),
    split="validation",
    train_split="train",
    helm=HelmIds(("train", "validation")),  # HELM returns its first 20% (train), then the rest
)


@pytest.mark.holistic(
    truthfulqa,
    adapter="multiple_choice_joint",
    instructions="",
    max_train_instances=5,
    perturbations=("robustness", "fairness"),
    metrics=(*metrics.HELM_EXACT_MATCH, *metrics.CALIBRATION, *metrics.HELM_TOXICITY),
)
def test_truthfulqa(completion, record):
    # How often the model answers with one of the offered letters at all (format following).
    record(valid_letter=completion.predicted_index is not None)
