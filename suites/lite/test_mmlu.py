"""MMLU in HELM Lite (main metric exact match): Classic's scenario from suites/core, on Lite's five subjects.

HELM Lite's leaderboard reports MMLU over the five subjects of its run entries at priority 2 (HELM's
run_entries_lite_20240424.conf): abstract algebra, college chemistry, computer security, econometrics and US foreign
policy, each ``mmlu:subject=<subject>,method=multiple_choice_joint`` (run_specs/lite_run_specs.py ``get_mmlu_spec``,
shared with Classic): "about <subject>", five in-context examples from the subject's dev questions, one generated
letter; metrics ``get_exact_match_metric_specs``. The hub source is Classic's ``cais/mmlu`` reading, kept to these five
subjects. HELM's size: each subject's test questions (100 to 114); the offline edition (data/mmlu.jsonl, written for
this project in ``cais/mmlu``'s row layout): 5 dev and 3 test questions per subject.
"""

import pytest

from pytest_holistic import Scenario, jsonl, metrics
from pytest_holistic.scenarios.helm_rows_lite import only_groups
from suites.core.test_mmlu import FIELDS, mmlu

pytestmark = [pytest.mark.helm_lite, pytest.mark.question_answering]

LITE_SUBJECTS = ("abstract_algebra", "college_chemistry", "computer_security", "econometrics", "us_foreign_policy")

mmlu_lite = Scenario(
    "mmlu",
    local=jsonl("data/mmlu.jsonl", FIELDS),
    hub=only_groups(mmlu.source("hub"), LITE_SUBJECTS),
    split=mmlu.split,
    train_split=mmlu.train_split,
    helm=mmlu.helm,
)


@pytest.mark.holistic(
    mmlu_lite,
    adapter="multiple_choice_joint",
    instructions="The following are multiple choice questions (with answers) about {group}.\n",
    per_group=True,  # HELM runs MMLU one subject at a time: the subject's name and its own dev questions as examples
    max_train_instances=5,
    metrics=metrics.HELM_EXACT_MATCH,
)
def test_mmlu(completion, record):
    record(valid_letter=completion.predicted_index is not None)
