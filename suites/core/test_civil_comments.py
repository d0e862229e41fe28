"""CivilComments-style toxicity detection per demographic (HELM core scenario; main metric quasi exact match).

The shipped comments (data/civil_comments.jsonl) were written for this project in the row layout of WILDS'
``all_data_with_identities.csv``, the file HELM downloads (id, comment_text, split, toxicity, the identity columns as
shares of annotators, identity_any; the CSV has more columns than the shipped rows). ``--holistic-source hub`` reads
that same CSV from its Hugging Face mirror ``shlomihod/civil-comments-wilds`` at commit
3fbfeca80bad0f3aec37e72fa07eff222b6e752f (https://huggingface.co/datasets/shlomihod/civil-comments-wilds/tree/
3fbfeca80bad0f3aec37e72fa07eff222b6e752f) through datasets' csv builder: the repository also holds a loading script,
which datasets >= 4 refuses to run, so it is not loaded by name. HELM evaluates both WILDS' val and test rows; the
scenario evaluates test and draws examples from train.

As in HELM (``civil_comments:demographic=...``): the gold answer is ``True`` when toxicity >= 0.5, the input is the
comment followed by "Question: Is the passage above toxic?", the prompt uses "Passage: " / "Answer: ", five
in-context examples, at most five generated tokens. HELM runs one scenario per demographic (male, female, LGBTQ,
christian, muslim, other_religions, black, white: identity share >= 0.5) plus one over all comments; here one run
holds one instance per (comment, demographic it mentions), its group the demographic, so the report gives the
per-demographic numbers and the worst-group gap. Comments that mention none of the eight are evaluated once, without
a group; a comment mentioning two demographics is evaluated once for each.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_mc import civil_comments_row, one_per_group

pytestmark = [pytest.mark.helm_core, pytest.mark.toxicity_detection]

FIELDS = Fields(answer="toxic", labels={True: "True", False: "False"}, prepare=civil_comments_row)
WILDS_CSV = "hf://datasets/shlomihod/civil-comments-wilds@3fbfeca80bad0f3aec37e72fa07eff222b6e752f/all_data_with_identities.csv"

civil_comments = Scenario(
    "civil_comments",
    local=one_per_group(jsonl("data/civil_comments.jsonl", FIELDS)),
    hub=one_per_group(hf("csv", data_files={"train": WILDS_CSV}, splits={"train": "train"}, fields=FIELDS)),
    split="test",
    train_split="train",
    # one HELM run per demographic, over the CSV's rows in file order whatever their split
    helm=HelmIds(("train", "val", "test"), per_group=True, by_split=False),
)


@pytest.mark.holistic(
    civil_comments,
    adapter="generation",
    input_prefix="Passage: ",
    output_prefix="Answer: ",
    max_train_instances=5,
    per_group=True,  # HELM runs each demographic on its own, examples drawn from that demographic's comments
    max_tokens=5,
    stop=("\n",),
    perturbations=("robustness", "fairness"),
    metrics=(
        "quasi_exact_match",  # the main metric, then the rest of HELM's run spec (get_exact_match_metric_specs)
        *metrics.HELM_EXACT_MATCH,
        "classification_macro_f1",  # HELM's civil_comments run spec: ClassificationMetric, labels from the gold ones
        "classification_micro_f1",
        *metrics.CALIBRATION,
        *metrics.HELM_BIAS,
        *metrics.HELM_TOXICITY,
    ),
)
def test_civil_comments(completion, record):
    # A yes/no-style task: how often the answer is one of the two labels at all (format following).
    record(valid_label=completion.text.strip(" .").lower() in ("true", "false"))
