"""Small suite files that the pytester tests write into their temporary projects."""

CAPITALS = '''
import pytest
from pytest_holistic import Instance, scenario, metrics

@scenario
def capitals():
    """Capitals; the last reference is wrong on purpose, so the tiny model scores 3 of 4."""
    yield Instance(id="fr", input="The capital of France is", references=("Paris",))
    yield Instance(id="jp", input="The capital of Japan is", references=("Tokyo",))
    yield Instance(id="it", input="The capital of Italy is", references=("Rome",))
    yield Instance(id="eg", input="The capital of Egypt is", references=("Madrid",))

@pytest.mark.holistic(capitals, adapter="generation", input_suffix="", output_prefix="", max_tokens=5,
                      stop=("."), max_train_instances=0, metrics=("exact_match",) {extra})
def test_capitals(instance, completion, record):
    record(metrics.quasi_exact_match(completion.text, instance.references))
'''


def capitals(extra: str = "") -> str:
    """The capitals suite, with extra marker arguments (``', gates=(...)'``)."""
    return CAPITALS.replace("{extra}", extra)


YES_NO = '''
import pytest
from pytest_holistic import Fields, Scenario, jsonl

yes_no = Scenario("yes_no", local=jsonl("yes_no.jsonl", Fields(input="question", answer="answer",
                  labels={True: "Yes", False: "No"})), split="test")

@pytest.mark.holistic(yes_no, adapter="multiple_choice_separate", input_prefix="Question: ", max_train_instances=0)
def test_yes_no(completion):
    pass
'''

YES_NO_ROWS = [
    {"id": "fire", "question": "Is fire hot?", "answer": True, "split": "test"},
    {"id": "ice", "question": "Is ice hot?", "answer": False, "split": "test"},
]
