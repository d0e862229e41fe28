"""HELM synthetic reasoning (targeted evaluation: reasoning), generated from a seed; main metric exact match.

Adapter as HELM's ``synthetic_reasoning`` run spec: generation, instructions "Please solve the following
problem.", output prefix ``Target: ``, 5 in-context examples, max_tokens 50, stop at a newline. HELM evaluates
each mode on 5000 test instances (1000 train, seed 42); this offline run takes 10 per mode.
"""

import pytest

from pytest_holistic import metrics
from pytest_holistic.scenarios.synthetic import synthetic_reasoning

pytestmark = [pytest.mark.helm_targeted, pytest.mark.reasoning]

LAYOUT = dict(
    adapter="generation",
    perturbations=False,  # HELM perturbs the core scenarios only; a typo would change the symbols to match
    instructions="Please solve the following problem.\n",
    input_prefix="",
    output_prefix="Target: ",
    max_train_instances=5,
    max_tokens=50,
    stop=("\n",),
    metrics=(*metrics.HELM_EXACT_MATCH, "ece_10_bin", "ece_1_bin"),
)


@pytest.mark.holistic(synthetic_reasoning("pattern_match", train=20, test=10), **LAYOUT)
def test_pattern_match(completion):
    pass


@pytest.mark.holistic(synthetic_reasoning("variable_substitution", train=20, test=10), **LAYOUT)
def test_variable_substitution(completion):
    pass


@pytest.mark.holistic(synthetic_reasoning("induction", train=20, test=10), **LAYOUT)
def test_induction(completion):
    pass
