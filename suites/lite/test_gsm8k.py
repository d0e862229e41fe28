"""GSM8K, grade-school math word problems (HELM Lite; main metric final-number exact match).

HELM Lite's run entry ``gsm`` (run_specs/lite_run_specs.py ``get_gsm_spec``, scenarios/gsm_scenario.py): ``Q: <question>``
/ ``A: <worked answer>``, generation, 5 in-context examples with their worked solutions, ``max_tokens=400``, stop at a
blank line (``\\n\\n``: a solution spans several lines once written out); the reference is the solution on one line with
``#### n`` read as ``The answer is n.``; metrics ``exact_match_indicator`` and ``final_number_exact_match``, the last
number of the answer against the reference's. HELM reads the train and test JSONL files of openai/grade-school-math;
the hub source is the same rows as ``openai/gsm8k`` (config ``main``; no revision pinned: none could be verified in
public code). HELM's size: 1,000 of the test split's 1,319 problems (HELM Lite's ``--max-eval-instances 1000``); the
offline edition (data/gsm8k.jsonl, problems written for this project in the hub's row layout): 5 train, 8 test.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_lite import gsm8k_row

pytestmark = [pytest.mark.helm_lite, pytest.mark.mathematical_reasoning]

FIELDS = Fields(input="question", prepare=gsm8k_row)

gsm8k = Scenario(
    "gsm",
    local=jsonl("data/gsm8k.jsonl", FIELDS),
    hub=hf("openai/gsm8k", "main", splits={"train": "train", "test": "test"}, fields=FIELDS),
    split="test",
    train_split="train",
    helm=HelmIds(("train", "test")),  # HELM reads train.jsonl, then test.jsonl
)


@pytest.mark.holistic(
    gsm8k,
    adapter="generation",
    input_prefix="Q: ",
    output_prefix="A: ",
    max_train_instances=5,
    local_max_train_instances=3,  # offline: three worked solutions keep the prompt short for the embedded model on a CPU
    max_tokens=400,
    stop=("\n\n",),
    metrics=("final_number_exact_match", "exact_match_indicator"),
)
def test_gsm8k(completion, record):
    record(answered=bool(completion.text.strip()))
