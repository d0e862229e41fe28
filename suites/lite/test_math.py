"""MATH with chain of thought, competition mathematics (HELM Lite; main metric ``math_equiv_chain_of_thought``).

HELM Lite's run entries ``math:subject=<subject>,level=1,use_chain_of_thought=True`` for its seven subjects
(run_specs/lite_run_specs.py ``get_math_spec``, scenarios/math_scenario.py; the leaderboard's MATH is the level-1 runs,
priority 2 in run_entries_lite_20240424.conf): HELM's instructions, ``###`` before every example, ``Problem: `` and
``Answer: `` each ending in a newline, 8 in-context examples with whole worked solutions from the subject's level-1
train problems, ``max_tokens=400``, stop at ``###``; metric ``math_equiv_chain_of_thought``: the last ``\\boxed{}`` of the
answer against the reference solution's, both normalised as Hendrycks et al.'s MATH code does. One HELM run per
subject, so the run is ``per_group`` and ``-k geometry`` selects one subject. HELM's order: the whole dataset sorted by
problem and shuffled with seed 42 before the subject and level are picked (``math_order``).

The hub source is the dataset HELM reads, ``hendrycks/competition_math`` at HELM's pinned revision; it has since left
the hub, so ``--holistic-data-dir`` with a local copy in its layout (``problem``, ``level``, ``type``, ``solution``;
train and test) is how it runs today. HELM's size: each subject's level-1 test problems (about 30 to 135); the offline
edition (data/math.jsonl, problems written for this project in the dataset's row layout): 3 level-1 train problems and
2 level-1 test problems per subject, and one level-2 problem each that the level filter leaves out.
"""

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_lite import math_level, math_order, math_row

pytestmark = [pytest.mark.helm_lite, pytest.mark.mathematical_reasoning]

FIELDS = Fields(input="problem", id="{group}-{split}-{index:05d}", prepare=math_row)  # -k geometry selects a subject
HELM_REVISION = "71b758ecc688b2822d07ffa7f8393299f1dc7cac"  # HELM's pin in math_scenario.py

math_chain_of_thought = Scenario(
    "math_chain_of_thought",
    local=math_level(math_order(jsonl("data/math.jsonl", FIELDS)), "1"),
    hub=math_level(
        math_order(hf("hendrycks/competition_math", revision=HELM_REVISION, splits=("train", "test"), fields=FIELDS)), "1"
    ),
    split="test",
    train_split="train",
    helm=HelmIds(("train", "test"), per_group=True),  # one HELM run per subject (and level), each numbered from id0
)


@pytest.mark.holistic(
    math_chain_of_thought,
    adapter="generation",
    instructions="Given a mathematics problem, determine the answer. Simplify your answer as much as possible.\n",
    instance_prefix="###\n",
    input_prefix="Problem: ",
    input_suffix="\n",
    output_prefix="Answer: ",
    output_suffix="\n",
    per_group=True,  # HELM runs MATH one subject at a time, its examples from the subject's own train problems
    max_train_instances=8,
    local_max_train_instances=2,  # offline: two worked solutions keep the prompt short for the embedded model on a CPU
    max_tokens=400,
    stop=("###",),
    metrics=("math_equiv_chain_of_thought",),
)
def test_math(completion, record):
    record(boxed="\\boxed" in completion.text)
