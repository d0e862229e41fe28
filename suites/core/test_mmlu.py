"""MMLU-style knowledge questions with four options (HELM core scenario; main metric exact match).

The shipped questions (data/mmlu.jsonl) were written for this project in the row layout of the hub
dataset ``cais/mmlu``, so ``--holistic-source hub`` evaluates the real MMLU with the same mapping.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl

FIELDS = Fields(input="question", choices="choices", answer="answer", group="subject")

mmlu = Scenario(
    "mmlu",
    local=jsonl("data/mmlu.jsonl", FIELDS),
    hub=hf("cais/mmlu", "all", splits={"test": "test", "dev": "dev"}, fields=FIELDS),
    split="test",
    train_split="dev",
)


@pytest.mark.holistic(
    mmlu,
    adapter="multiple_choice_joint",
    instructions="The following are multiple choice questions (with answers).",
    max_train_instances=3,
    metrics=("exact_match", "ece_10_bin", "ece_1_bin", "selective_acc_at_10", "selective_cov_acc_area", "platt_ece_10_bin"),
)
def test_mmlu(completion, record):
    # How often the model answers with one of the offered letters at all (format following).
    record(valid_letter=completion.predicted_index is not None)
