"""HELM Dyck languages (targeted evaluation: reasoning), generated from a seed; main metric exact match.

Adapter as HELM's ``dyck_language`` run spec: a completion prompt with the instructions "Please complete the rest
of the following Dyck sequences, making sure that the parentheses are closed properly.", input prefix
``Input: ``, 3 in-context examples, max_tokens 5, stop at a newline. HELM scores ``exact_match_indicator``,
which for these answers (no indicator symbol in them) is exact match.

The instances are HELM's ``dyck_language_np=3`` run's (``DyckLanguageScenario(num_parenthesis_pairs=3)``, seed 42,
its 3 train instances), drawn as HELM draws them: HELM evaluates all 500 test instances, this run the first 30 of
them, HELM's ``id3``..``id32`` (tests/conformance/golden/scenarios.json holds both). ``dyck_language(pairs=3)``
gives HELM's 500: 500 items of at most 5 generated tokens each instead of 30.
"""

import pytest

from pytest_holistic.scenarios.synthetic import dyck_language

pytestmark = [pytest.mark.helm_targeted, pytest.mark.reasoning]

dyck = dyck_language(pairs=3, train=3, test=30)


@pytest.mark.holistic(
    dyck,
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
