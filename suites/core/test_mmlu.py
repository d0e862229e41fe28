"""MMLU-style knowledge questions with four options (HELM core scenario; main metric exact match).

The shipped questions (data/mmlu.jsonl) were written for this project in the row layout of the hub
dataset ``cais/mmlu``, so ``--holistic-source hub`` evaluates the real MMLU with the same mapping. Every item id
starts with its subject, offline and on the hub, so ``pytest suites/core/test_mmlu.py -k "anatomy or virology"``
selects subjects; the report gives each subject's numbers as groups. HELM runs MMLU one subject at a time, so the
run is ``per_group``: each question's prompt says "about {its subject}" and its 5 in-context examples are drawn from
its own subject's dev questions, as HELM draws them (the shipped data has 5 dev questions per subject).
"""

from dataclasses import replace

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds

pytestmark = [pytest.mark.helm_core, pytest.mark.question_answering]

FIELDS = Fields(input="question", choices="choices", answer="answer", group="subject")

mmlu = Scenario(
    "mmlu",
    local=jsonl("data/mmlu.jsonl", FIELDS),
    # The hub rows have no id: "<subject>-<row index>" keeps the subject in every item id. The validation split is
    # read (never evaluated) because HELM numbers a subject's test questions after its dev and val questions.
    hub=hf(
        "cais/mmlu",
        "all",
        splits={"dev": "dev", "validation": "val", "test": "test"},
        fields=replace(FIELDS, id="{subject}-{index:05d}"),
    ),
    split="test",
    train_split="dev",
    helm=HelmIds(("dev", "val", "test"), per_group=True),  # one HELM run per subject: dev, val, test CSVs
)


@pytest.mark.holistic(
    mmlu,
    adapter="multiple_choice_joint",
    instructions="The following are multiple choice questions (with answers) about {group}.\n",
    per_group=True,  # HELM runs MMLU one subject at a time: the subject's name and its own dev questions as examples
    max_train_instances=5,
    # Table 4 for MMLU: robustness (invariance only: no contrast sets) and fairness; no bias; toxicity, which is
    # computed over the answer letter and so vacuous (digest §8 C17), but reported as Table 4 asks.
    perturbations=("robustness", "fairness"),
    metrics=(*metrics.HELM_EXACT_MATCH, *metrics.CALIBRATION, *metrics.HELM_TOXICITY),
)
def test_mmlu(completion, record):
    # How often the model answers with one of the offered letters at all (format following).
    record(valid_letter=completion.predicted_index is not None)
