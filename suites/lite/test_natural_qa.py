"""NaturalQuestions open- and closed-book in HELM Lite (main metric F1): Classic's scenarios, imported from suites/core.

HELM Lite's run entries ``natural_qa:mode=openbook_longans`` and ``natural_qa:mode=closedbook``
(run_specs/lite_run_specs.py ``get_natural_qa_spec``, shared with HELM Classic): generation, 5 shots,
``max_tokens=300``, stop at a newline; metrics ``get_f1_metric_specs``: exact match, quasi exact match, F1. Lite adds
no perturbed variants, calibration, bias or toxicity. HELM's size: 1,000 of the valid split's questions (HELM's
default ``max_eval_instances``); the offline edition: 10.
"""

import pytest

from pytest_holistic import metrics
from suites.core.test_natural_qa import natural_qa_closedbook, natural_qa_openbook_longans

pytestmark = [pytest.mark.helm_lite, pytest.mark.question_answering]

METRICS = ("f1_score", *metrics.HELM_F1)  # the main metric, then HELM's F1 run spec


@pytest.mark.holistic(
    natural_qa_openbook_longans,
    adapter="generation",
    input_prefix="",
    output_prefix="Answer: ",
    max_train_instances=5,
    local_max_train_instances=2,  # offline: two passages keep the prompt short enough for the embedded model on a CPU
    max_tokens=300,
    stop=("\n",),
    metrics=METRICS,
)
def test_natural_qa_openbook_longans(completion, record):
    record(answered=bool(completion.text.strip()))


@pytest.mark.holistic(
    natural_qa_closedbook,
    adapter="generation",
    input_prefix="Question: ",
    output_prefix="Answer: ",
    max_train_instances=5,
    max_tokens=300,
    stop=("\n",),
    metrics=METRICS,
)
def test_natural_qa_closedbook(completion, record):
    record(answered=bool(completion.text.strip()))
