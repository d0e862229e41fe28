"""MS MARCO passage ranking, regular and TREC 2019 tracks (HELM core scenarios; main metrics RR@10 and NDCG@10).

Each instance is a query whose references are its candidate passages; ``adapter="ranking"`` asks, per passage,
HELM's ``Passage: ...\\nQuery: ...\\nDoes the passage answer the query?\\nAnswer:`` and orders the passages by
HELM's binary-ranking key. Few-shot: HELM's ``max_train_instances=4``, i.e. two training queries, each shown with the
two passages HELM's scenario keeps for it (``TrainingPairs``): its most relevant one and the first non-gold one.

- Regular track: the shipped rows (data/msmarco_regular.jsonl) were written for this project in the row layout
  of the hub dataset ``microsoft/ms_marco`` config ``v2.1`` (``query``, ``query_id``, ``answers``, ``passages``
  with ``is_selected``/``passage_text``/``url``); ``--holistic-source hub`` reads its ``validation`` split (few-shot
  from ``train``), a selected passage being relevant (1), the others not (0). HELM ranks BM25's top passages of
  the ranking task's dev-small queries; the hub's QnA rows carry the ~10 passages Bing returned per query, the
  nearest public row-level equivalent. Queries with no selected passage are left out, as HELM keeps only queries
  with a gold passage. No revision is pinned: no public code we could read pins a commit of that dataset.
- TREC 2019 track: graded judgments 0-3 (TREC Deep Learning 2019 passage qrels, ``2019qrels-pass.txt``, which HELM
  downloads from trec.nist.gov); 2 and 3 are gold matches, 0 and 1 are not (HELM's ``GOLD_RELATIONS``). The hub
  has no row-level dataset joining those qrels with their queries and passages, so the hub source is a local
  folder the user builds, ``msmarco-trec2019/`` next to this file, holding ``test.jsonl`` (and ``train.jsonl`` for
  few-shot examples) in the shipped file's layout: one row per query, ``{"query_id", "query", "passages":
  [{"doc_id", "text", "relevance"}]}``, from ``msmarco-test2019-queries.tsv``, the qrels and the passage collection.

Metric families (HELM Table 4): accuracy (RR@10 / NDCG@10), calibration (the probability that the top passage
answers the query, two-way normalised over Yes/No, against whether it is gold), robustness and fairness
(perturbed queries), efficiency. Bias and toxicity are not computed: a ranking answer is an ordering of given
passages, with no generated text to measure.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic import Fields, Instance, Scenario, hf, jsonl, metrics

pytestmark = [pytest.mark.helm_core, pytest.mark.information_retrieval]


def regular_row(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """``microsoft/ms_marco`` v2.1: the passages dict of parallel lists becomes references; selected means relevant."""
    passages = row["passages"]
    texts, selected = passages["passage_text"], passages["is_selected"]
    if len(texts) != len(selected):
        raise ValueError(f"passages has {len(texts)} texts but {len(selected)} is_selected flags")
    references = [{"text": text, "correct": bool(flag), "relevance": 1 if flag else 0} for text, flag in zip(texts, selected)]
    return {**row, "id": f"q{row['query_id']}", "references": references}


def trec_row(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """TREC DL 2019 judgments: graded relevance kept for NDCG; 2 and 3 are gold (HELM), 0 and 1 are not."""
    references = [
        {"text": passage["text"], "correct": int(passage["relevance"]) >= 2, "relevance": int(passage["relevance"])}
        for passage in row["passages"]
    ]
    return {**row, "id": f"q{row['query_id']}", "references": references}


@dataclass(frozen=True)
class WithGold:
    """A source keeping only queries with at least one gold passage (HELM's filter on MS MARCO queries)."""

    inner: Any

    def __call__(self) -> Iterator[Instance]:
        return (instance for instance in self.inner() if instance.correct_indices)

    def provenance(self) -> dict[str, Any]:
        return {**self.inner.provenance(), "filter": "queries with a gold passage"}

    def resolve(self, base: Path) -> WithGold:
        return replace(self, inner=self.inner.resolve(base))


@dataclass(frozen=True)
class TrainingPairs:
    """HELM's MS MARCO training queries: the most relevant passage and the first non-gold one, nothing else.

    HELM's scenario builds each few-shot query this way (its best-judged passage and the first retrieved one that is
    not gold), and its ranking adapter then shows every passage of a training query; the pair's order is seeded by the
    query (HELM's follows a shuffle of its whole passage collection). Queries without both kinds are left out.
    """

    inner: Any

    def __call__(self) -> Iterator[Instance]:
        for instance in self.inner():
            if instance.split != "train":
                yield instance
                continue
            references = instance.references
            gold = [reference for reference in references if reference.correct]
            other = [reference for reference in references if not reference.correct]
            if gold and other:
                pair = [max(gold, key=lambda reference: reference.gain), other[0]]  # max keeps the first of equals
                random.Random(f"msmarco-train:{instance.id}").shuffle(pair)
                yield replace(instance, references=tuple(pair))

    def provenance(self) -> dict[str, Any]:
        return {**self.inner.provenance(), "training_queries": "HELM's pair: the best gold passage and the first non-gold one"}

    def resolve(self, base: Path) -> TrainingPairs:
        return replace(self, inner=self.inner.resolve(base))


REGULAR = Fields(input="query", prepare=regular_row)
TREC = Fields(input="query", prepare=trec_row)

msmarco_regular = Scenario(
    "msmarco_regular",
    local=TrainingPairs(jsonl("data/msmarco_regular.jsonl", REGULAR)),
    hub=TrainingPairs(
        WithGold(hf("microsoft/ms_marco", "v2.1", splits={"validation": "validation", "train": "train"}, fields=REGULAR))
    ),
    split="validation",
)

msmarco_trec = Scenario(
    "msmarco_trec",
    local=TrainingPairs(jsonl("data/msmarco_trec2019.jsonl", TREC)),
    hub=TrainingPairs(WithGold(hf("msmarco-trec2019", splits={"test": "test", "train": "train"}, fields=TREC))),
    split="test",
)


@pytest.mark.holistic(
    msmarco_regular,
    adapter="ranking",
    metrics=("rr_at_10", "ndcg_at_10", *metrics.CALIBRATION),
    perturbations=("robustness", "fairness"),
)
def test_msmarco_regular(completion, record):
    # Whether the passage ranked first is a gold one (the per-query number behind RR@1 and the calibration metrics).
    record(top_passage_gold=bool(completion.correct))


@pytest.mark.holistic(
    msmarco_trec,
    adapter="ranking",
    metrics=("ndcg_at_10", "rr_at_10", *metrics.CALIBRATION),
    perturbations=("robustness", "fairness"),
)
def test_msmarco_trec(completion, record):
    record(top_passage_gold=bool(completion.correct))
