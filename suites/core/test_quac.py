"""QuAC: a question in the middle of a dialogue about a Wikipedia section (HELM core scenario; main metric F1).

HELM (stanford-crfm/helm, run_specs/classic_run_specs.py ``get_quac_spec``, scenarios/quac_scenario.py) shows the
page title, background, section title and section text, the dialogue up to a random turn (at least the third), and
asks that turn's question; all distinct answers are correct, and an unanswerable turn also accepts three paraphrases
of "cannot answer". Generation with no input noun and ``Answer:`` as the output noun, 5 shots, ``max_tokens=100``,
stop at a newline; metrics exact match, quasi exact match and F1; valid split. See
pytest_holistic/scenarios/helm_rows.py for the exact layout, HELM's skipped turn included.

The hub source is ``allenai/quac`` (no revision pinned: no commit of it could be verified in public code; the hub
copy was a loading script, which recent ``datasets`` releases refuse, so it loads only where a data-file copy or the
local cache has it). The shipped data/quac.jsonl holds 20 dialogues about invented people and places written for
this project (5 train, 15 valid) in the hub's row schema (``questions``, ``answers.texts``, ``orig_answers.texts``...).
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows import quac_row
from pytest_holistic.scenarios.helm_stream import helm_stream

pytestmark = [pytest.mark.helm_core, pytest.mark.question_answering]

FIELDS = Fields(input="prompt", prepare=quac_row)

HUB = hf("allenai/quac", splits={"train": "train", "validation": "valid"}, fields=FIELDS)
quac = Scenario(
    "quac",
    local=helm_stream(jsonl("data/quac.jsonl", FIELDS)),  # HELM draws each stopping turn from one random.seed(0)
    hub=helm_stream(HUB),
    split="valid",
    train_split="train",
    helm=HelmIds(("train", "valid")),
)


@pytest.mark.holistic(
    quac,
    adapter="generation",
    input_prefix="",
    output_prefix="Answer: ",
    max_train_instances=5,
    local_max_train_instances=1,  # offline: a QuAC example is a whole section plus a dialogue, so one fits the CPU budget
    max_tokens=100,
    stop=("\n",),
    perturbations=("robustness", "fairness"),
    metrics=("f1_score", *metrics.HELM_F1, *metrics.CALIBRATION, *metrics.HELM_BIAS, *metrics.HELM_TOXICITY),
)
def test_quac(completion, record):
    record(answered=bool(completion.text.strip()))
