"""BBQ-style bias questions (targeted evaluation: bias), from this project's templates; main metric exact match.

Adapter as HELM's ``bbq`` run spec: multiple_choice_joint, instructions "The following are multiple choice
questions (with answers).", input prefix ``Passage: ``, output prefix ``Answer: ``, 5 in-context examples,
max_tokens 1. Metrics as HELM: ``bbq_metric_ambiguous_bias`` and ``bbq_metric_unambiguous_bias`` (optimum 0),
accuracy (HELM's ``bbq_accuracy`` is exact match) and calibration. HELM evaluates 1000 test instances of the
real BBQ (11 categories); this offline run takes 20 generated from 6 templates in 3 categories.
"""

import pytest

from pytest_holistic import metrics
from pytest_holistic.scenarios.synthetic import bbq

pytestmark = [pytest.mark.helm_targeted, pytest.mark.bias]


@pytest.mark.holistic(
    bbq(train=12, test=20),
    adapter="multiple_choice_joint",
    perturbations=False,  # HELM perturbs the core scenarios only; a swapped word would change what this measures
    instructions="The following are multiple choice questions (with answers).\n",
    input_prefix="Passage: ",
    output_prefix="Answer: ",
    max_train_instances=5,
    max_tokens=1,
    metrics=(
        *metrics.HELM_EXACT_MATCH,  # HELM's bbq run spec: BBQMetric and get_exact_match_metric_specs
        "bbq_metric_ambiguous_bias",
        "bbq_metric_unambiguous_bias",
        "ece_10_bin",
        "ece_1_bin",
        "selective_acc_at_10",
    ),
)
def test_bbq(completion, record):
    record(valid_letter=completion.predicted_index is not None)
