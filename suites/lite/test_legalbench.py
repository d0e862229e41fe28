"""LegalBench, five legal reasoning tasks (HELM Lite; main metric quasi exact match).

HELM Lite's run entries ``legalbench:subset=<task>`` (run_specs/lite_run_specs.py ``get_legalbench_spec``,
scenarios/legalbench_scenario.py) for abercrombie, corporate_lobbying, international_citizenship_questions,
function_of_decision_section and proa: the task's instructions, each row as ``<name>: <value>`` lines in the task's
field order, the label after the task's output noun, five in-context examples, at most 30 generated tokens, stop at a
newline; metrics ``get_exact_match_metric_specs``. One run per task: ``pytest suites/lite/test_legalbench.py -k proa``.
The field order, label column and output nouns are those of LegalBench's ``helm_prompt_settings.jsonl``
(HazyResearch/legalbench), which HELM downloads; that file's instruction texts are not copied: the instructions below
were written for this project, each describing the task and naming the answers it takes.

The hub source is ``nguha/legalbench`` at HELM's pinned revision, one config per task (train and test); a local copy in
its layout (``--holistic-data-dir``: ``nguha/legalbench/<task>/{train,test}.jsonl`` or parquet) reads the same way.
HELM's size: each task's test rows, at most 1,000 (HELM Lite's ``--max-eval-instances 1000``); the offline edition
(data/legalbench/<task>.jsonl, rows written for this project in the dataset's layout): 5 train and 4 test rows per task.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_lite import legalbench_row

pytestmark = [pytest.mark.helm_lite, pytest.mark.legal]

HELM_REVISION = "e042ea68c19df12b737fe768572f22ead61e8e37"  # HELM's pin in legalbench_scenario.py


@dataclass(frozen=True)
class Task:
    """One LegalBench task as HELM prompts it: its columns in order with their names, the output noun, instructions."""

    fields: tuple[tuple[str, str], ...]
    output_noun: str
    instructions: str


TASKS = {
    "abercrombie": Task(
        (("Description", "text"),),
        "Type",
        "Place each product's mark on the scale of trademark distinctiveness: generic (the common name of the product), "
        "descriptive (it names a quality, purpose or feature of the product), suggestive (it hints at a quality, and "
        "imagination is needed to link it to the product), arbitrary (an ordinary word with no link to the product) or "
        "fanciful (an invented word). Answer with one of these five words.",
    ),
    "corporate_lobbying": Task(
        (
            ("Official title of bill", "bill_title"),
            ("Official summary of bill", "bill_summary"),
            ("Company name", "company_name"),
            ("Company business description", "company_description"),
        ),
        "Label",
        "From a bill's title and summary and a company's description of its business in its annual report, decide "
        "whether the bill, if it became law, could change the company's profits or costs. Answer Yes or No.",
    ),
    "international_citizenship_questions": Task(
        (("Question", "question"),),
        "Answer",
        "Answer each question about a country's citizenship law as that law stood on January 1, 2020. Answer Yes or No.",
    ),
    "function_of_decision_section": Task(
        (("Text", "Paragraph"),),
        "Function",
        "Say what the paragraph from a court opinion does. Facts: it tells the events behind the lawsuit. Procedural "
        "History: it tells how the litigation reached this court. Issue: it states a question the court must decide. "
        "Rule: it states a rule of law that bears on the question. Analysis: it applies the law to the facts. "
        "Conclusion: it gives the court's conclusion. Decree: it is the order that resolves the dispute.",
    ),
    "proa": Task(
        (("Statute", "text"),),
        "Answer",
        "A private right of action lets a private person go to court to enforce a statute. Does the clause below give "
        "one? Answer Yes or No.",
    ),
}
"""HELM Lite's five tasks: field order, label column ``answer`` and output nouns from LegalBench's HELM settings."""


def legalbench_scenario(task: str) -> Scenario:
    fields = Fields(input="text", prepare=partial(legalbench_row, TASKS[task].fields, "answer"))
    return Scenario(
        f"legalbench_{task}",
        local=jsonl(f"data/legalbench/{task}.jsonl", fields),
        hub=hf("nguha/legalbench", task, revision=HELM_REVISION, splits={"train": "train", "test": "test"}, fields=fields),
        split="test",
        train_split="train",
        helm=HelmIds(("train", "test")),  # HELM reads the train split, then the test split
        helm_group="legalbench",  # HELM Lite's one LegalBench column: the mean over the five tasks
    )


def legalbench_test(task: str) -> Callable[..., None]:
    """The test function of one task, marked with HELM's LegalBench adaptation."""

    @pytest.mark.holistic(
        legalbench_scenario(task),
        adapter="generation",
        instructions=TASKS[task].instructions + "\n",
        input_prefix="",
        output_prefix=f"{TASKS[task].output_noun}: ",
        max_train_instances=5,
        max_tokens=30,
        stop=("\n",),
        metrics=("quasi_exact_match", *metrics.HELM_EXACT_MATCH),
    )
    def test(completion, record):
        record(answered=bool(completion.text.strip()))

    test.__name__ = test.__qualname__ = f"test_legalbench_{task}"
    return test


for _task in TASKS:
    globals()[f"test_legalbench_{_task}"] = legalbench_test(_task)
