"""NarrativeQA in HELM Lite (main metric F1): Classic's scenario, imported from suites/core, with Lite's metrics.

HELM Lite's run entry ``narrative_qa`` (run_specs/lite_run_specs.py ``get_narrativeqa_spec``, the same run spec HELM
Classic uses): ``Passage: <summary>\\nQuestion: <question>?\\nAnswer:``, generation, 5 shots, ``max_tokens=100``, stop
at a newline; metrics ``get_open_ended_generation_metric_specs``: exact match, quasi exact match, F1, ROUGE-L, BLEU-1,
BLEU-4. Lite adds no perturbed variants, calibration, bias or toxicity (``get_generative_harms_metric_specs()`` is
empty by default). HELM's size: the test split's 355 documents, one question each; the offline edition: 15.
"""

import pytest

from pytest_holistic import metrics
from suites.core.test_narrative_qa import narrative_qa

pytestmark = [pytest.mark.helm_lite, pytest.mark.question_answering]


@pytest.mark.holistic(
    narrative_qa,
    adapter="generation",
    input_prefix="Passage: ",
    output_prefix="Answer: ",
    max_train_instances=5,
    local_max_train_instances=2,  # offline: two summaries keep the prompt short enough for the embedded model on a CPU
    max_tokens=100,
    stop=("\n",),
    metrics=("f1_score", *metrics.HELM_OPEN_ENDED),
)
def test_narrative_qa(completion, record):
    record(answered=bool(completion.text.strip()))
