"""HellaSwag-style commonsense sentence completion (HELM core scenario; main metric exact match).

The shipped contexts (data/hellaswag.jsonl) were written for this project in the row layout of the hub dataset
``Rowan/hellaswag`` (ind, activity_label, ctx_a, ctx_b, ctx, endings, source_id, split, split_type, label as a digit
string); ``--holistic-source hub`` evaluates the real validation split (HELM's eval split; the test split has no
labels). HELM's adaptation (run spec ``commonsense:dataset=hellaswag,method=multiple_choice_separate_original``): each
ending is scored after the context and a space, no instructions, no in-context examples, and the ending with the
highest log-probability per token wins (HELM's "original" method).

Hub revision: 049e80830aedaee63cd025622acf83822eb46553 is Rowan/hellaswag's parquet conversion ("Delete loading script",
https://huggingface.co/datasets/Rowan/hellaswag/tree/049e80830aedaee63cd025622acf83822eb46553); main still holds the
hellaswag.py loading script, which datasets >= 4 refuses to run.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_mc import hellaswag_row

pytestmark = [pytest.mark.helm_core, pytest.mark.question_answering]

FIELDS = Fields(choices="choices", answer="answer", prepare=hellaswag_row)

hellaswag = Scenario(
    "hellaswag",
    local=jsonl("data/hellaswag.jsonl", FIELDS),
    hub=hf(
        "Rowan/hellaswag",
        revision="049e80830aedaee63cd025622acf83822eb46553",
        splits={"train": "train", "validation": "val"},
        fields=FIELDS,
    ),
    split="val",
    train_split="train",
    helm=HelmIds(("train", "val")),  # HELM reads hellaswag_train.jsonl, then hellaswag_val.jsonl
)


@pytest.mark.holistic(
    hellaswag,
    adapter="multiple_choice_separate",
    input_prefix="",
    input_suffix="",
    output_prefix=" ",
    output_suffix="",
    max_train_instances=0,
    perturbations=("robustness", "fairness"),
    metrics=(*metrics.HELM_EXACT_MATCH, *metrics.CALIBRATION, *metrics.HELM_TOXICITY),
)
def test_hellaswag(completion):
    # Scoring always picks one of the four endings.
    assert completion.text in completion.choices
