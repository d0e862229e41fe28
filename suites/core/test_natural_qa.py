"""NaturalQuestions, open book (the annotated long answer as context) and closed book (HELM core scenarios; main metric F1).

HELM (stanford-crfm/helm, run_specs/lite_run_specs.py ``get_natural_qa_spec``, scenarios/natural_qa_scenario.py)
reads only the NQ dev set, keeps examples with a short answer and splits them into train (even) and valid (odd);
prompts are ``Passage: <long answer>\\n\\nQuestion: <Question>?\\nAnswer:`` (mode ``openbook_longans``, no input
noun) and ``Question: <Question>?\\nAnswer:`` (mode ``closedbook``); generation, 5 shots, ``max_tokens=300``
("answers are at most 65 words"), stop at a newline; metrics exact match, quasi exact match and F1.

The hub source reads the ``dev`` config of ``google-research-datasets/natural_questions`` (the dev set only, like
HELM, instead of the 40+ GB default config). As HELM's class, both sources are read under one ``random.seed(0)``
stream (``helm_stream``): the rows with a short answer alternate train, valid by position, and each draws its short
answer in turn. HELM alternates within each of its five dev files; the hub's one dev split does not mark where a file
ends, so the count runs on across them. No revision is pinned: no commit of the dataset repository that carries the
``dev`` config could be verified in public code. The shipped data/natural_qa.jsonl holds 20 examples written for this
project in the hub's row schema (a small HTML page per question with byte and token offsets, five-way-style
annotations with long and short answers); by position they give 10 train and 10 valid instances.
"""

from pathlib import Path

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows import natural_qa_row
from pytest_holistic.scenarios.helm_stream import helm_stream
from pytest_holistic.scenarios.loaders import HubSource

DATA = Path(__file__).parent / "data"  # anchored here: suites/lite imports this scenario

pytestmark = [pytest.mark.helm_core, pytest.mark.question_answering]

OPEN_BOOK = Fields(input="Passage: {passage}\n\nQuestion: {question}", prepare=natural_qa_row)
CLOSED_BOOK = Fields(input="question", prepare=natural_qa_row)
# HELM's F1 metric specs (exact_match, quasi_exact_match, f1_score), calibration, HELM's six bias metrics and
# toxicity over the answers (Table 4: every family for NaturalQuestions); robustness/fairness come from perturbations.
METRICS = (
    "f1_score",  # the main metric, then the rest of HELM's natural_qa run spec (get_f1_metric_specs)
    *metrics.HELM_F1,
    "ece_10_bin",
    "ece_1_bin",
    "selective_acc_at_10",
    "selective_cov_acc_area",
    "platt_ece_10_bin",
    "bias_representation_gender",
    "bias_representation_race",
    "bias_associations_gender_adjective",
    "bias_associations_gender_profession",
    "bias_associations_race_adjective",
    "bias_associations_race_profession",
    "toxicity",
    "toxic_frac",
)


def hub_source(fields: Fields) -> HubSource:
    """The NQ dev set on the hub, read with ``fields`` (both modes read the same rows)."""
    return hf("google-research-datasets/natural_questions", "dev", splits={"validation": "valid"}, fields=fields)


def _natural_qa(name: str, fields: Fields) -> Scenario:
    return Scenario(
        name,
        local=helm_stream(jsonl(DATA / "natural_qa.jsonl", fields)),
        hub=helm_stream(hub_source(fields)),
        split="valid",
        train_split="train",
        helm=HelmIds(("train", "valid"), by_split=False),  # HELM keeps the file's order: even rows train, odd valid
    )


natural_qa_openbook_longans = _natural_qa("natural_qa_openbook_longans", OPEN_BOOK)
natural_qa_closedbook = _natural_qa("natural_qa_closedbook", CLOSED_BOOK)


@pytest.mark.holistic(
    natural_qa_openbook_longans,
    adapter="generation",
    input_prefix="",
    output_prefix="Answer: ",
    max_train_instances=5,
    local_max_train_instances=2,  # offline: two passages keep the prompt short enough for the embedded model on a CPU
    max_tokens=300,
    stop=("\n",),
    perturbations=("robustness", "fairness"),
    metrics=METRICS,
)
def test_natural_qa_openbook_longans(completion, record):
    record(answered=bool(completion.text.strip()))


@pytest.mark.holistic(
    natural_qa_closedbook,
    adapter="generation",
    input_prefix="Question: ",
    output_prefix="Answer: ",
    max_train_instances=5,  # HELM's 5: closed-book prompts are short
    max_tokens=300,
    stop=("\n",),
    perturbations=("robustness", "fairness"),
    metrics=METRICS,
)
def test_natural_qa_closedbook(completion, record):
    record(answered=bool(completion.text.strip()))
