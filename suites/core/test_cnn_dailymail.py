"""CNN/DailyMail summarisation (HELM core scenario; main metric ROUGE-2), three-sentence highlights.

The shipped articles (data/cnn_dailymail.jsonl: 15 test, 5 train) are invented news stories written for this
project in the row layout of the hub dataset ``abisee/cnn_dailymail`` (config ``3.0.0``: ``article``,
``highlights`` with one sentence per line, ``id``); ``--holistic-source hub`` evaluates the real test split.
No public code we could check pins a commit of that dataset, so ``revision`` is left unset.

Prompt as HELM's ``get_summarization_adapter_spec(num_sents=3, max_tokens=128)``: ``###\\nArticle: `` before
the article, a blank line, ``Summarize the above article in 3 sentences.`` on its own line, stop at ``###``.
HELM samples at temperature 0.3 with 5 in-context examples; here decoding is greedy (reproducible, cacheable)
and one example keeps the prompt short on a CPU (a 5-shot prompt of news articles is several thousand
tokens); set ``max_train_instances=5`` for HELM's layout.

Metrics as HELM's Table 4 row for CNN/DM: accuracy (ROUGE-1/2/L, extractiveness, METEOR, BERTScore, SummaC and
QAFactEval, the last three only when their models are given), bias and toxicity of the generated summaries,
and efficiency (always recorded). No calibration: a summary has no single answer probability worth
calibrating. ``perturbations=False``: HELM withholds robustness and fairness perturbations from
summarisation, whose long references a perturbed article would no longer match.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_summarization import helm_train_rows, summarization_prepare

pytestmark = [pytest.mark.helm_core, pytest.mark.summarization]

# As HELM's SummarizationScenario: texts on one line (the highlights too), the article cut at 512 words, train rows
# outside 50-150 words dropped.
FIELDS = Fields(input="article", references="highlights", prepare=summarization_prepare("article", "highlights"))

cnn_dailymail = Scenario(
    "cnn_dailymail",
    local=helm_train_rows(jsonl("data/cnn_dailymail.jsonl", FIELDS)),
    hub=helm_train_rows(
        hf("abisee/cnn_dailymail", "3.0.0", splits={"train": "train", "validation": "validation", "test": "test"}, fields=FIELDS)
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
    cnn_dailymail,
    perturbations=False,  # HELM perturbs no summarisation scenario (Table 4): the references would no longer match
    adapter="generation",
    input_prefix="###\nArticle: ",
    input_suffix="\n\n",
    output_prefix="Summarize the above article in 3 sentences.\n",
    output_suffix="\n",
    max_train_instances=5,
    local_max_train_instances=1,  # offline: one article as the example keeps the prompt within a CPU budget
    max_tokens=128,
    stop=("###",),
    metrics=SUMMARIZATION_METRICS,
)
def test_cnn_dailymail(completion):
    pass
