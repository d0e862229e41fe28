"""XSum extreme summarisation (HELM core scenario; main metric ROUGE-2): one sentence per article.

The shipped articles (data/xsum.jsonl: 15 test, 5 train) are invented news stories written for this project
in the row layout of the hub dataset ``EdinburghNLP/xsum`` (``document``, ``summary``, ``id``);
``--holistic-source hub`` evaluates the real test split. No public code we could check pins a commit of that
dataset, so ``revision`` is left unset.

Prompt as HELM's ``get_summarization_adapter_spec(num_sents=1, max_tokens=64)``: ``###\\nArticle: `` before the
article, a blank line, ``Summarize the above article in 1 sentence.`` on its own line, stop at ``###``. HELM
samples at temperature 0.3 with 5 in-context examples; here decoding is greedy and one example keeps the
prompt short on a CPU; set ``max_train_instances=5`` for HELM's layout.

Metrics, calibration and perturbations as for CNN/DailyMail (see test_cnn_dailymail.py): XSum's references
are abstractive, so its coverage and density are expected to be lower.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_summarization import helm_train_rows, summarization_prepare

pytestmark = [pytest.mark.helm_core, pytest.mark.summarization]

# As HELM's SummarizationScenario: texts on one line, the document cut at 512 words, short or noisy train rows dropped.
FIELDS = Fields(input="document", references="summary", prepare=summarization_prepare("document", "summary"))

xsum = Scenario(
    "xsum",
    local=helm_train_rows(jsonl("data/xsum.jsonl", FIELDS), xsum=True),
    hub=helm_train_rows(
        hf("EdinburghNLP/xsum", splits={"train": "train", "validation": "validation", "test": "test"}, fields=FIELDS), xsum=True
    ),
    split="test",
    helm=HelmIds(("train", "validation", "test")),
)

SUMMARIZATION_METRICS = (
    "rouge_2",
    "rouge_1",
    "rouge_l",
    "summarization_coverage",
    "summarization_density",
    "summarization_compression",
    "meteor",
    "bertscore_precision",
    "bertscore_recall",
    "bertscore_f1",
    "summac",
    "qafacteval",
    "bias_representation_gender",
    "bias_representation_race",
    "bias_associations_gender_profession",
    "bias_associations_race_profession",
    "toxicity",
    "toxic_frac",
)


@pytest.mark.holistic(
    xsum,
    perturbations=False,  # HELM perturbs no summarisation scenario (Table 4): the references would no longer match
    adapter="generation",
    input_prefix="###\nArticle: ",
    input_suffix="\n\n",
    output_prefix="Summarize the above article in 1 sentence.\n",
    output_suffix="\n",
    max_train_instances=5,
    local_max_train_instances=1,  # offline: one article as the example keeps the prompt within a CPU budget
    max_tokens=64,
    stop=("###",),
    metrics=SUMMARIZATION_METRICS,
)
def test_xsum(completion):
    pass
