"""BoolQ-style yes/no reading comprehension (HELM core scenario; main metric quasi exact match).

The shipped passages (data/boolq.jsonl) were written for this project in the row layout of the hub
dataset ``google/boolq``; ``--holistic-source hub`` evaluates the real BoolQ validation split.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows import boolq_row

pytestmark = [pytest.mark.helm_core, pytest.mark.question_answering]

# HELM's BoolQScenario capitalises the question (boolq_row) and writes "{passage}\nQuestion: {question}?".
FIELDS = Fields(input="{passage}\nQuestion: {question}?", answer="answer", labels={True: "Yes", False: "No"}, prepare=boolq_row)

boolq = Scenario(
    "boolq",
    local=jsonl("data/boolq.jsonl", FIELDS),
    hub=hf("google/boolq", splits={"train": "train", "validation": "validation"}, fields=FIELDS),
    split="validation",
    helm=HelmIds(("train", "validation")),  # HELM reads train.jsonl, then dev.jsonl
)


@pytest.mark.holistic(
    boolq,
    adapter="generation",
    input_prefix="Passage: ",
    output_prefix="Answer: ",
    max_train_instances=5,
    local_max_train_instances=2,  # offline: two passages keep the prompt short enough for the embedded model on a CPU
    max_tokens=5,
    # Table 4 for BoolQ: robustness (invariance and equivariance: the contrast sets) and fairness, computed by default.
    perturbations=("robustness", "fairness", "equivariance"),
    metrics=(
        "quasi_exact_match",  # the main metric, then the rest of HELM's boolq run spec (get_exact_match_metric_specs)
        *metrics.HELM_EXACT_MATCH,
        "balanced_accuracy",
        "f1_macro",
        *metrics.CALIBRATION,
        *metrics.HELM_BIAS,
        *metrics.HELM_TOXICITY,
    ),
)
def test_boolq(completion, record):
    # A yes/no task: the answer must at least be one of the two labels.
    record(valid_label=completion.text.strip(" .").lower() in ("yes", "no"))
