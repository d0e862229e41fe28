"""MedQA, US medical licensing exam questions with four options (HELM Lite; main metric quasi exact match).

HELM Lite's run entry ``med_qa`` (run_specs/lite_run_specs.py ``get_med_qa_spec``, scenarios/med_qa_scenario.py):
HELM's instructions, ``Question: `` / ``Answer: ``, five in-context examples from the train questions, one generated
letter; metrics ``get_exact_match_metric_specs``. HELM reads the 4-option US files (``phrases_no_exclude_{train,dev,
test}.jsonl``) from the dataset's archive; the hub source is ``GBaker/MedQA-USMLE-4-options``, the same rows and
columns for train and test (no revision pinned: none could be verified in public code). That copy has no dev split,
which HELM numbers before the test questions, so hub instances carry no HELM id. HELM's size: 1,000 of the test
split's 1,273 questions (HELM Lite's ``--max-eval-instances 1000``); the offline edition (data/med_qa.jsonl, clinical
vignettes written for this project in the files' row layout): 5 train, 2 dev, 8 test.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_lite import med_qa_row

pytestmark = [pytest.mark.helm_lite, pytest.mark.medicine]

FIELDS = Fields(input="question", choices="choices", answer="answer", prepare=med_qa_row)

med_qa = Scenario(
    "med_qa",
    local=jsonl("data/med_qa.jsonl", FIELDS),
    hub=hf("GBaker/MedQA-USMLE-4-options", splits={"train": "train", "test": "test"}, fields=FIELDS),
    split="test",
    train_split="train",
    helm=HelmIds(("train", "valid", "test"), hub=False),  # HELM: train, dev, then test files
)


@pytest.mark.holistic(
    med_qa,
    adapter="multiple_choice_joint",
    instructions="The following are multiple choice questions (with answers) about medicine.\n",
    max_train_instances=5,
    metrics=("quasi_exact_match", *metrics.HELM_EXACT_MATCH),
)
def test_med_qa(completion, record):
    record(valid_letter=completion.predicted_index is not None)
