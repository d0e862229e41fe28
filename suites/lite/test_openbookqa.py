"""OpenbookQA in HELM Lite (main metric exact match): Classic's scenario, imported from suites/core.

HELM Lite's run entry ``commonsense:dataset=openbookqa,method=multiple_choice_joint`` (run_specs/lite_run_specs.py
``get_commonsense_spec``): HELM's instructions, ``Question: `` / ``Answer: ``, five in-context examples, one generated
letter; metrics ``get_exact_match_metric_specs``. HELM's size: the test split's 500 questions; the offline edition: its
shipped test questions.
"""

import pytest

from pytest_holistic import metrics
from suites.core.test_openbookqa import openbookqa

pytestmark = [pytest.mark.helm_lite, pytest.mark.question_answering]


@pytest.mark.holistic(
    openbookqa,
    adapter="multiple_choice_joint",
    instructions="The following are multiple choice questions (with answers) about common sense.\n",
    max_train_instances=5,
    metrics=metrics.HELM_EXACT_MATCH,
)
def test_openbookqa(completion, record):
    record(valid_letter=completion.predicted_index is not None)
