"""HELM Dyck languages (targeted evaluation: reasoning), generated from a seed; main metric exact match.

Adapter as HELM's ``dyck_language`` run spec: a completion prompt with the instructions "Please complete the rest
of the following Dyck sequences, making sure that the parentheses are closed properly.", input prefix
``Input: ``, 3 in-context examples, max_tokens 5, stop at a newline. HELM scores ``exact_match_indicator``,
which for these answers (no indicator symbol in them) is exact match. HELM evaluates 500 test instances of
Dyck-n (3 train, seed 42); this offline run takes 30 of Dyck-3.
"""

import pytest

from pytest_holistic.scenarios.synthetic import dyck_language

pytestmark = [pytest.mark.helm_targeted, pytest.mark.reasoning]


@pytest.mark.holistic(
    dyck_language(pairs=3, train=3, test=30),
    adapter="generation",
    perturbations=False,  # a perturbed bracket sequence has a different answer
    instructions="Please complete the rest of the following Dyck sequences, making sure that the parentheses are closed properly.\n",
    input_prefix="Input: ",
    input_suffix="",
    output_prefix="",
    output_suffix="",
    max_train_instances=3,
    max_tokens=5,
    stop=("\n",),
    metrics=("exact_match_indicator", "exact_match", "prefix_exact_match", "ece_10_bin", "ece_1_bin"),
)
def test_dyck(completion, record):
    # How often the answer is made of closing brackets only (format following).
    record(only_closing=bool(completion.text) and set(completion.text.replace(" ", "")) <= set(")]}>"))
