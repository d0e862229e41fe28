"""IMDB-style movie-review sentiment (HELM core scenario; main metric quasi exact match).

The shipped reviews (data/imdb.jsonl) are of invented films, written for this project in the row
layout of the hub dataset ``stanfordnlp/imdb``; ``--holistic-source hub`` evaluates the real test split.
As HELM's ``imdb`` run spec: the model writes the label after "Sentiment: " (generation, at most 5 tokens, stop at a
newline, five in-context examples; the offline edition keeps two), and the probability of what it wrote is kept for
calibration.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows import imdb_row

pytestmark = [pytest.mark.helm_core, pytest.mark.sentiment_analysis]

FIELDS = Fields(input="text", answer="label", labels={0: "Negative", 1: "Positive"}, prepare=imdb_row)

imdb = Scenario(
    "imdb",
    local=jsonl("data/imdb.jsonl", FIELDS),
    hub=hf("stanfordnlp/imdb", splits={"train": "train", "test": "test"}, fields=FIELDS),
    split="test",
    # HELM reads train/pos, train/neg, then test/pos, test/neg; within a folder its order is a pinned file listing that
    # the hub rows do not carry, so the hub's instances get no HELM id (the shipped rows are in HELM's order).
    helm=HelmIds(("train", "test"), answers=("Positive", "Negative"), hub=False),
)


@pytest.mark.holistic(
    imdb,
    adapter="generation",
    input_prefix="Passage: ",
    output_prefix="Sentiment: ",
    max_train_instances=5,
    local_max_train_instances=2,  # offline: two reviews keep the prompt short enough for the embedded model on a CPU
    max_tokens=5,
    stop=("\n",),
    # Table 4 for IMDB: robustness (invariance and equivariance: the contrast sets) and fairness, computed by default.
    perturbations=("robustness", "fairness", "equivariance"),
    metrics=(
        *metrics.HELM_EXACT_MATCH,  # HELM's imdb run spec: get_exact_match_metric_specs
        "balanced_accuracy",
        "classification_macro_f1",  # HELM's imdb run spec: ClassificationMetric, labels from the gold ones
        "classification_micro_f1",
        *metrics.CALIBRATION,
        *metrics.HELM_BIAS,
        *metrics.HELM_TOXICITY,
    ),
)
def test_imdb(completion, record):
    # A two-label task: how often the answer is one of the labels at all (format following).
    record(valid_label=completion.text in ("Positive", "Negative"))
