"""RAFT-style real-world text classification, eleven tasks (HELM core scenario; main metric quasi exact match).

One run per subset, with HELM's subset names: ``pytest suites/core/test_raft.py -k banking_77`` runs one. The shipped
rows (data/raft/<subset>.jsonl, seven per subset) were written for this project in the row layout of the hub
dataset ``ought/raft`` (each subset's text columns, ``ID`` and the integer ClassLabel ``Label``, 1 = first label name).
``--holistic-source hub`` reads the subset's labelled train split (50 rows; the test labels are private) from the
parquet export of ought/raft at commit 98963eb0e73e932e591ae07d7756909f8d54ce2f on refs/convert/parquet
(https://huggingface.co/datasets/ought/raft/blob/98963eb0e73e932e591ae07d7756909f8d54ce2f/ade_corpus_v2/train/0000.parquet):
main holds the raft.py loading script, which datasets >= 4 refuses to run.

HELM's split, on both sources: ``datasets.Dataset.train_test_split(test_size=0.8, seed=42)`` of the labelled rows
(``numpy.random.default_rng(42).permutation(n)``; the first ``ceil(0.8 n)`` positions are the evaluated test set,
the rest the few-shot pool: 40/10 on the hub, 6/1 for the seven shipped rows). Adaptation as in HELM's
``raft:subset=...`` run spec: the subset's instructions, the input as "Field: value" lines in HELM's field order, the
answer after "Label: ", five in-context examples (as many as the pool has), at most 30 generated tokens. HELM's
instruction texts live in a settings file it downloads; the instructions below were written for this project, each
describing the task and listing the subset's label names.
"""

from collections.abc import Callable

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_mc import RAFT_SUBSETS, held_out_split, raft_labels, raft_prepare

pytestmark = [pytest.mark.helm_core, pytest.mark.text_classification]

RAFT_PARQUET = "98963eb0e73e932e591ae07d7756909f8d54ce2f"

TASKS = {
    "ade_corpus_v2": "Decide whether the sentence, taken from a medical case report, describes an adverse drug effect: "
    "a harm such as a symptom, disease or injury that a patient suffered because of a drug they took.",
    "banking_77": "The query below was sent to a bank's customer service. Decide which of the bank's 77 intent categories "
    "best describes what the customer wants.",
    "neurips_impact_statement_risks": "Read the broader impact statement of a machine learning paper and decide whether it "
    "names a harmful application of the paper's own research (not a past harm that the research helps to address).",
    "one_stop_english": "The article was rewritten for adult learners of English at one of three reading levels. "
    "Decide which level it was written for.",
    "overruling": "A court overrules a precedent when it declares that an earlier decision is no longer good law. "
    "Decide whether the sentence, taken from a court opinion, overrules an earlier decision.",
    "semiconductor_org_types": "The organization below contributed a paper to a semiconductor conference. "
    "Decide what kind of institution it is.",
    "systematic_review_inclusion": "Decide whether the paper belongs in a meta-review of systematic reviews about "
    "interventions that increase monetary donations to charity. It qualifies only if it is itself a peer-reviewed "
    "systematic review in English on charitable giving, not new data, a narrative overview or a study of "
    "cause-related marketing.",
    "tai_safety_research": "Transformative AI is AI whose impact would match the agricultural or industrial revolution. "
    "Decide whether the paper is research on making such AI go well: motivated by the safety of transformative AI, "
    "with substantive safety content rather than capabilities alone, written for researchers.",
    "terms_of_service": "Decide whether the sentence from an online service's terms of service is potentially unfair to "
    "the consumer, for example because it lets the provider change the terms or close the account at will, limits the "
    "provider's liability, or forces disputes into arbitration.",
    "tweet_eval_hate": "Decide whether the tweet contains hate speech against immigrants or women: language that attacks "
    "or demeans people because of who they are.",
    "twitter_complaints": "The tweet is addressed to a company. Decide whether it is a complaint: the writer reports that "
    "something fell short of what they expected.",
}


def instructions(subset: str) -> str:
    """The task description, then the label names, numbered, that the answer must use; a newline ends them, as HELM's
    run spec ends its instructions."""
    names = "\n".join(f"{number}. {name}" for number, name in enumerate(RAFT_SUBSETS[subset].labels, start=1))
    return f"{TASKS[subset]}\nPossible labels:\n{names}\n"


def raft_scenario(subset: str) -> Scenario:
    fields = Fields(answer="Label", labels=raft_labels(subset), prepare=raft_prepare(subset))
    hub = hf("ought/raft", revision=RAFT_PARQUET, data_files={"train": f"{subset}/train/0000.parquet"}, fields=fields)
    return Scenario(
        f"raft_{subset}",
        local=held_out_split(jsonl(f"data/raft/{subset}.jsonl", fields)),
        hub=held_out_split(hub),
        split="test",
        train_split="train",
        helm=HelmIds(("train", "test")),  # held_out_split gives HELM's order: the drawn train rows, then the test rows
    )


def raft_test(subset: str) -> Callable[..., None]:
    """The test function of one subset, marked with HELM's RAFT adaptation."""
    labels = set(RAFT_SUBSETS[subset].labels)

    @pytest.mark.holistic(
        raft_scenario(subset),
        adapter="generation",
        instructions=instructions(subset),
        input_prefix="",
        output_prefix="Label: ",
        max_train_instances=5,
        max_tokens=30,
        stop=("\n",),
        perturbations=("robustness", "fairness"),
        metrics=(
            "quasi_exact_match",  # the main metric, then the rest of HELM's raft run spec (get_exact_match_metric_specs)
            *metrics.HELM_EXACT_MATCH,
            "classification_macro_f1",  # HELM's raft run spec: ClassificationMetric, labels from the gold ones
            "classification_micro_f1",
            *metrics.CALIBRATION,
            *metrics.HELM_BIAS,
            *metrics.HELM_TOXICITY,
        ),
    )
    def test(completion, record):
        # How often the answer is one of the subset's label names at all (format following).
        record(valid_label=completion.text.strip() in labels)

    test.__name__ = test.__qualname__ = f"test_raft_{subset}"
    return test


for _subset in TASKS:
    globals()[f"test_raft_{_subset}"] = raft_test(_subset)
