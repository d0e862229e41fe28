"""HELM numeracy (targeted evaluation: reasoning), generated from a seed; main metric exact match.

Adapter as HELM's ``numeracy`` run spec in ``function`` mode: no instructions and no in-context examples beyond
the relation's own points (the header ``x, y`` is part of each input), values joined by ``", "``, output prefix
``", "``, max_tokens 20, stop at a newline. HELM shows 100 points per relation and evaluates up to 1000
relations per type (seed 0); this offline run shows 20 points and takes 15 relations each of the linear and
plane types.
"""

import pytest

from pytest_holistic.scenarios.synthetic import numeracy

pytestmark = [pytest.mark.helm_targeted, pytest.mark.reasoning]

LAYOUT = dict(
    adapter="generation",
    perturbations=False,  # a perturbed number changes the answer
    instructions="",
    input_prefix="",
    input_suffix="",
    output_prefix=", ",
    max_train_instances=0,
    max_tokens=20,
    stop=("\n",),
    metrics=("exact_match", "quasi_exact_match", "absolute_value_difference", "ece_10_bin", "ece_1_bin"),
)


@pytest.mark.holistic(numeracy("linear", points=20, train=5, test=15), **LAYOUT)
def test_linear(completion):
    pass


@pytest.mark.holistic(numeracy("plane", points=20, train=5, test=15), **LAYOUT)
def test_plane(completion):
    pass
