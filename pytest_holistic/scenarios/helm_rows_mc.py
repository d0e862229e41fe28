"""Row functions and split rules for five HELM core scenarios: HellaSwag, OpenBookQA, TruthfulQA, CivilComments, RAFT.

Each ``*_row`` function is a ``Fields(prepare=...)`` hook: it flattens one row of the real dataset's schema into the
columns ``id``/``input``/``choices``/``answer``/``split``/``group`` (or a label column), so the shipped rows and the hub
rows go through the same code. A row it cannot read raises ``ValueError``/``KeyError`` naming the field; ``Fields``
turns that into a one-line ``ScenarioError`` naming the row. The split rules wrap a source (``jsonl(...)`` or
``hf(...)``) when HELM does not use the dataset's own splits.

Facts reproduced here, with their sources (stanford-crfm/helm, src/helm/benchmark/scenarios/):

* HellaSwag (commonsense_scenario.py): input ``"{activity_label}: {ctx_a} {ctx_b with its first letter upper-cased}"``,
  options ``endings``, gold ``endings[label]``; HELM evaluates the labelled ``val`` split. Hub schema (Rowan/hellaswag):
  ind, activity_label, ctx_a, ctx_b, ctx, endings, source_id, split, split_type, label (a digit string, empty in test).
* OpenBookQA (commonsense_scenario.py): input ``question.stem``, options ``choices[].text``, gold the choice whose
  label is ``answerKey``; HELM evaluates ``test``. Hub schema (allenai/openbookqa, config main): id, question_stem,
  choices {text: [...], label: [...]}, answerKey.
* TruthfulQA (truthful_qa_scenario.py): the first ``int(817 * 0.2) = 163`` questions are the few-shot pool, the rest
  are evaluated; each answer is stripped and ends in a period (HELM's ``format_str``); the options are the wrong
  answers followed by the best one, rotated left by
  ``ord(best[0]) % len(options)`` so the right letter varies. Hub schema (truthfulqa/truthful_qa, config
  multiple_choice): question, mc1_targets {choices, labels} (exactly one label 1), mc2_targets {choices, labels}.
* CivilComments (civil_comments_scenario.py, WILDS CSV all_data_with_identities.csv): gold ``True`` when
  ``toxicity >= 0.5``; input ``"{comment_text}\\nQuestion: Is the passage above toxic?"`` (HELM's PassageQuestionInput);
  a comment belongs to demographic d when column ``d >= 0.5``; HELM's eight demographics are below.
* RAFT (raft_scenario.py): the public ``train`` split (50 labelled rows per subset; test labels are private) is split
  with ``datasets.Dataset.train_test_split(test_size=0.8, seed=42)``, i.e. ``np.random.default_rng(42).permutation(n)``,
  the first ``ceil(0.8 * n)`` positions held out as test and the rest the few-shot pool; input ``"\\n".join(f"{field}:
  {row[field]}")`` over HELM's per-subset field ordering (as published in allenai's efficiency-benchmark raft task,
  which carries HELM's prompt-construction settings); gold ``Label`` through the ClassLabel names of ought/raft's raft.py
  (index 0 is "Unlabeled").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .instance import Instance
from .loaders import Source

# -- HellaSwag ------------------------------------------------------------------------------------


def hellaswag_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A HellaSwag row as HELM reads it; the row's own ``split`` column ("train"/"val") names its split."""
    ctx_b = _text(row, "ctx_b", allow_empty=True)
    ctx_b = ctx_b[:1].upper() + ctx_b[1:]
    endings = _strings(row, "endings")
    label = row["label"]
    if isinstance(label, str) and label.strip().isdigit():
        label = int(label)
    if isinstance(label, bool) or not isinstance(label, int):
        raise ValueError(f"field 'label' is {label!r}, not the index of the right ending (HellaSwag's test split has no labels)")
    return {
        "id": f"hellaswag-{row['ind']}",
        # as HELM writes it: an empty ctx_b leaves the trailing space
        "input": f"{_text(row, 'activity_label')}: {_text(row, 'ctx_a', allow_empty=True)} {ctx_b}",
        "choices": endings,
        "answer": label,
        "split": {"validation": "val"}.get(str(row.get("split") or ""), row.get("split")),
    }


# -- OpenBookQA -----------------------------------------------------------------------------------


def openbookqa_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenBookQA row: the stem, the four option texts and the index of the option labelled ``answerKey``."""
    choices = row["choices"]
    if not isinstance(choices, Mapping) or "text" not in choices or "label" not in choices:
        raise ValueError(f"field 'choices' must be an object with lists 'text' and 'label', got {_short(choices)}")
    texts = _strings({"choices.text": choices["text"]}, "choices.text")
    labels = [str(label) for label in _strings({"choices.label": choices["label"]}, "choices.label")]
    if len(texts) != len(labels):
        raise ValueError(f"field 'choices' has {len(texts)} texts but {len(labels)} labels; give one label per text")
    key = row["answerKey"]
    if key not in labels:
        raise ValueError(f"field 'answerKey' is {key!r}, not one of the choice labels {labels}")
    return {
        "id": _text(row, "id"),
        "input": _text(row, "question_stem"),
        "choices": texts,
        "answer": labels.index(key),
        "split": row.get("split"),
    }


# -- TruthfulQA -----------------------------------------------------------------------------------


def truthfulqa_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A TruthfulQA row with HELM's options: the wrong answers, then the best, each stripped and ending in a period,
    rotated. A ``generation`` row (the columns of the CSV HELM reads: ``best_answer``, ``incorrect_answers``) gives
    HELM's own options; a ``multiple_choice`` row gives mc1's (the paper's multiple-choice set) in HELM's order."""
    if "best_answer" in row:
        wrong = row["incorrect_answers"]
        wrong = wrong.split(";") if isinstance(wrong, str) else _strings({"incorrect_answers": wrong}, "incorrect_answers")
        return _truthfulqa_options(row, _sentence(_text(row, "best_answer")), [_sentence(a) for a in wrong if a.strip()])
    targets = row["mc1_targets"]
    if not isinstance(targets, Mapping) or "choices" not in targets or "labels" not in targets:
        raise ValueError(f"field 'mc1_targets' must be an object with lists 'choices' and 'labels', got {_short(targets)}")
    choices = [_sentence(choice) for choice in _strings({"mc1_targets.choices": targets["choices"]}, "mc1_targets.choices")]
    labels = list(targets["labels"]) if isinstance(targets["labels"], Sequence) else None
    if labels is None or len(labels) != len(choices):
        shown = _short(targets["labels"])
        raise ValueError(f"field 'mc1_targets' needs one label per choice ({len(choices)} choices, labels {shown})")
    correct = [index for index, label in enumerate(labels) if label == 1]
    if len(correct) != 1:
        raise ValueError(f"field 'mc1_targets' must mark exactly one choice correct with label 1, found {len(correct)}")
    best = choices[correct[0]]
    return _truthfulqa_options(row, best, [choice for index, choice in enumerate(choices) if index != correct[0]])


def _truthfulqa_options(row: Mapping[str, Any], best: str, wrong: list[str]) -> dict[str, Any]:
    if best == ".":
        raise ValueError("the best answer is empty")
    options = [*wrong, best]
    shift = ord(best[0]) % len(options)
    return {
        "input": _text(row, "question").strip(),
        "choices": options[shift:] + options[:shift],
        "answer": (len(options) - 1 - shift) % len(options),
    }


def _sentence(answer: str) -> str:
    """HELM's ``format_str`` for a TruthfulQA answer: stripped, ending in a period."""
    answer = answer.strip()
    return answer if answer.endswith(".") else answer + "."


# -- CivilComments --------------------------------------------------------------------------------

CIVIL_COMMENTS_DEMOGRAPHICS = ("male", "female", "LGBTQ", "christian", "muslim", "other_religions", "black", "white")
"""HELM's eight WILDS demographics, in HELM's spelling (also the WILDS CSV's column names)."""

CIVIL_COMMENTS_QUESTION = "Is the passage above toxic?"
GROUP_SEPARATOR = "|"


def civil_comments_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A WILDS CivilComments row: HELM's passage-question input, ``toxic`` (toxicity >= 0.5), and every demographic
    the comment mentions (column >= 0.5) joined by ``|`` (``one_per_group`` makes one instance per demographic)."""
    toxicity = _score(row, "toxicity", null_is_zero=False)
    groups = [name for name in CIVIL_COMMENTS_DEMOGRAPHICS if _score(row, name, null_is_zero=True) >= 0.5]
    raw_id = row.get("id")
    return {
        "id": None if raw_id in (None, "") else f"comment-{_integral(raw_id)}",
        "input": f"{_text(row, 'comment_text')}\nQuestion: {CIVIL_COMMENTS_QUESTION}",
        "toxic": toxicity >= 0.5,
        "split": row.get("split"),
        "group": GROUP_SEPARATOR.join(groups) or None,
    }


# -- RAFT -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RaftSubset:
    """One RAFT task: the fields HELM puts in the prompt, in order, and the label names (ClassLabel index 1, 2, ...)."""

    fields: tuple[str, ...]
    labels: tuple[str, ...]


_BANKING_77 = [
    "Refund_not_showing_up",
    "activate_my_card",
    "age_limit",
    "apple_pay_or_google_pay",
    "atm_support",
    "automatic_top_up",
    "balance_not_updated_after_bank_transfer",
    "balance_not_updated_after_cheque_or_cash_deposit",
    "beneficiary_not_allowed",
    "cancel_transfer",
    "card_about_to_expire",
    "card_acceptance",
    "card_arrival",
    "card_delivery_estimate",
    "card_linking",
    "card_not_working",
    "card_payment_fee_charged",
    "card_payment_not_recognised",
    "card_payment_wrong_exchange_rate",
    "card_swallowed",
    "cash_withdrawal_charge",
    "cash_withdrawal_not_recognised",
    "change_pin",
    "compromised_card",
    "contactless_not_working",
    "country_support",
    "declined_card_payment",
    "declined_cash_withdrawal",
    "declined_transfer",
    "direct_debit_payment_not_recognised",
    "disposable_card_limits",
    "edit_personal_details",
    "exchange_charge",
    "exchange_rate",
    "exchange_via_app",
    "extra_charge_on_statement",
    "failed_transfer",
    "fiat_currency_support",
    "get_disposable_virtual_card",
    "get_physical_card",
    "getting_spare_card",
    "getting_virtual_card",
    "lost_or_stolen_card",
    "lost_or_stolen_phone",
    "order_physical_card",
    "passcode_forgotten",
    "pending_card_payment",
    "pending_cash_withdrawal",
    "pending_top_up",
    "pending_transfer",
    "pin_blocked",
    "receiving_money",
    "request_refund",
    "reverted_card_payment?",
    "supported_cards_and_currencies",
    "terminate_account",
    "top_up_by_bank_transfer_charge",
    "top_up_by_card_charge",
    "top_up_by_cash_or_cheque",
    "top_up_failed",
    "top_up_limits",
    "top_up_reverted",
    "topping_up_by_card",
    "transaction_charged_twice",
    "transfer_fee_charged",
    "transfer_into_account",
    "transfer_not_received_by_recipient",
    "transfer_timing",
    "unable_to_verify_identity",
    "verify_my_identity",
    "verify_source_of_funds",
    "verify_top_up",
    "virtual_card_not_working",
    "visa_or_mastercard",
    "why_verify_identity",
    "wrong_amount_of_cash_received",
    "wrong_exchange_rate_for_cash_withdrawal",
]

RAFT_SUBSETS: Mapping[str, RaftSubset] = MappingProxyType(
    {
        "ade_corpus_v2": RaftSubset(("Sentence",), ("ADE-related", "not ADE-related")),
        "banking_77": RaftSubset(("Query",), tuple(_BANKING_77)),
        "neurips_impact_statement_risks": RaftSubset(
            ("Impact statement", "Paper title"), ("doesn't mention a harmful application", "mentions a harmful application")
        ),
        "one_stop_english": RaftSubset(("Article",), ("advanced", "elementary", "intermediate")),
        "overruling": RaftSubset(("Sentence",), ("not overruling", "overruling")),
        "semiconductor_org_types": RaftSubset(
            ("Organization name", "Paper title"), ("company", "research institute", "university")
        ),
        "systematic_review_inclusion": RaftSubset(("Title", "Abstract", "Journal"), ("included", "not included")),
        "tai_safety_research": RaftSubset(
            ("Title", "Abstract Note", "Publication Title", "Item Type", "Publication Year"),
            ("TAI safety research", "not TAI safety research"),
        ),
        "terms_of_service": RaftSubset(("Sentence",), ("not potentially unfair", "potentially unfair")),
        "tweet_eval_hate": RaftSubset(("Tweet",), ("hate speech", "not hate speech")),
        "twitter_complaints": RaftSubset(("Tweet text",), ("complaint", "no complaint")),
    }
)
"""HELM's eleven RAFT subsets (raft_scenario.py SUBSETS, same order)."""


def raft_labels(subset: str) -> dict[int, str]:
    """``Label`` value -> label name for ``Fields(labels=...)``: ClassLabel index 1.. (0 is "Unlabeled")."""
    return {index: name for index, name in enumerate(RAFT_SUBSETS[subset].labels, start=1)}


def raft_row(subset: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """A RAFT row of ``subset``: HELM's ``Field: value`` lines and the integer ``Label`` (use ``functools.partial``)."""
    spec = RAFT_SUBSETS[subset]
    label = row["Label"]
    if isinstance(label, str) and label.strip().isdigit():
        label = int(label)
    if label == 0 or label == "Unlabeled":
        raise ValueError("field 'Label' is 0 ('Unlabeled': RAFT's test rows carry no label); evaluate the labelled train split")
    if isinstance(label, str) and label in spec.labels:
        label = spec.labels.index(label) + 1
    if isinstance(label, bool) or not isinstance(label, int) or not 1 <= label <= len(spec.labels):
        raise ValueError(f"field 'Label' is {label!r}, not a label index 1-{len(spec.labels)} of {subset}")
    return {
        "id": f"{subset}-{_integral(row['ID'])}",
        "input": "\n".join(f"{field}: {_text(row, field, allow_empty=True)}" for field in spec.fields),
        "Label": label,
    }


def raft_prepare(subset: str) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The ``Fields(prepare=...)`` hook of one subset (a picklable partial)."""
    if subset not in RAFT_SUBSETS:
        raise ValueError(f"unknown RAFT subset {subset!r}; use one of {', '.join(RAFT_SUBSETS)}")
    return partial(raft_row, subset)


# -- split rules and group expansion, as source wrappers ---------------------------------------------


@dataclass(frozen=True)
class Reshaped:
    """A source whose instances are rewritten as a whole (new splits, one copy per group), described in provenance."""

    inner: Source
    reshape: Callable[[list[Instance]], list[Instance]]
    note: str

    def resolve(self, base: Path) -> Reshaped:
        return replace(self, inner=self.inner.resolve(base))

    def __call__(self) -> Iterator[Instance]:
        return iter(self.reshape(list(self.inner())))

    def provenance(self) -> dict[str, Any]:
        return {**self.inner.provenance(), "reshaped": self.note}

    def with_data_dir(self, data_dir: Path | None) -> Reshaped:
        """The inner hub source reads its ``--holistic-data-dir`` copy, as an unwrapped one would."""
        inner = getattr(self.inner, "with_data_dir", None)
        return replace(self, inner=inner(data_dir)) if callable(inner) else self

    def unavailable(self) -> str | None:
        inner = getattr(self.inner, "unavailable", None)
        found: str | None = inner() if callable(inner) else None
        return found

    def reached(self) -> str:
        inner = getattr(self.inner, "reached", None)
        return str(inner()) if callable(inner) else "the source could be read"


def dataset_permutation(count: int, seed: int) -> list[int]:
    """The row order ``datasets`` draws with ``seed`` (``shuffle`` and ``train_test_split``): NumPy's
    ``default_rng(seed).permutation(count)``."""
    import numpy as np  # heavy: only when a scenario that shuffles is loaded

    return [int(position) for position in np.random.default_rng(seed).permutation(count)]


def held_out_indices(count: int, test_size: float = 0.8, seed: int = 42) -> tuple[list[int], list[int]]:
    """(train, test) row positions exactly as ``datasets.Dataset.train_test_split(test_size, seed=seed)`` picks them."""
    n_test = math.ceil(test_size * count)
    permutation = dataset_permutation(count, seed)
    return permutation[n_test:], permutation[:n_test]


def _held_out(test_size: float, seed: int, instances: list[Instance]) -> list[Instance]:
    train, test = held_out_indices(len(instances), test_size, seed)
    return [replace(instances[k], split="train") for k in train] + [replace(instances[k], split="test") for k in test]


def held_out_split(source: Source, *, test_size: float = 0.8, seed: int = 42) -> Reshaped:
    """HELM's RAFT split of a labelled set: ``ceil(test_size * n)`` rows drawn with ``seed`` become ``test``, the rest
    ``train`` (the few-shot pool), in HELM's order: the train rows, then the test rows, each in the drawn order (the
    order of ``train_test_split``'s two datasets, which HELM numbers). The split depends only on the row positions."""
    note = f"HELM RAFT held-out split: train_test_split(test_size={test_size}, seed={seed}) of the labelled rows"
    return Reshaped(source, partial(_held_out, test_size, seed), note)


def _leading(fraction: float, prefix: str, train: str, evaluated: str, instances: list[Instance]) -> list[Instance]:
    cut = int(len(instances) * fraction)
    return [
        replace(instance, id=f"{prefix}-{k:04d}", split=train if k < cut else evaluated) for k, instance in enumerate(instances)
    ]


def leading_train_split(
    source: Source, *, fraction: float = 0.2, id_prefix: str, train: str = "train", evaluated: str = "validation"
) -> Reshaped:
    """HELM's TruthfulQA split: the first ``int(n * fraction)`` rows are ``train``, the rest ``evaluated``; the rows
    carry no id, so each gets ``{id_prefix}-{position:04d}`` (its position in the dataset)."""
    note = f"HELM TruthfulQA split: first int(n * {fraction}) rows train, the rest {evaluated}; ids by row position"
    return Reshaped(source, partial(_leading, fraction, id_prefix, train, evaluated), note)


def _per_group(separator: str, instances: list[Instance]) -> list[Instance]:
    expanded: list[Instance] = []
    for instance in instances:
        groups = [group for group in (instance.group or "").split(separator) if group]
        if not groups:
            expanded.append(replace(instance, group=None))
        for group in groups:
            expanded.append(replace(instance, id=f"{instance.id}-{group}", group=group))
    return expanded


def one_per_group(source: Source, *, separator: str = GROUP_SEPARATOR) -> Reshaped:
    """One instance per group a row belongs to (``group`` holds ``male|black``), id ``{id}-{group}``; a row with no group
    stays once, without a group. This is how HELM evaluates CivilComments: one run per demographic, a comment counted
    in each demographic it mentions."""
    note = f"one instance per demographic the row mentions ('{separator}'-joined)"
    return Reshaped(source, partial(_per_group, separator), note)


# -- small readers with field-naming errors -----------------------------------------------------------


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _text(row: Mapping[str, Any], name: str, *, allow_empty: bool = False) -> str:
    value = row[name]
    if value is None or not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ValueError(f"field {name!r} must be text, got {_short(value)}")
    text = str(value)
    if not allow_empty and not text.strip():
        raise ValueError(f"field {name!r} is empty")
    return text


def _strings(row: Mapping[str, Any], name: str) -> list[str]:
    value = row[name]
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ValueError(f"field {name!r} must be a non-empty list of strings, got {_short(value)}")
    if not all(isinstance(item, str) for item in value):
        raise ValueError(f"field {name!r} must hold strings only, got {_short(value)}")
    return list(value)


def _score(row: Mapping[str, Any], name: str, *, null_is_zero: bool) -> float:
    """A 0-1 annotator share; a null identity cell means "not mentioned" (NaN >= 0.5 is false in HELM's filter)."""
    value = row[name]
    if value is None or value == "":
        if null_is_zero:
            return 0.0
        raise ValueError(f"field {name!r} is null; give the share of annotators (0 to 1)")
    if isinstance(value, bool):
        raise ValueError(f"field {name!r} is {value!r}, not a share of annotators between 0 and 1")
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"field {name!r} is {_short(value)}, not a share of annotators between 0 and 1") from None
    if math.isnan(score):
        if null_is_zero:
            return 0.0
        raise ValueError(f"field {name!r} is NaN; give the share of annotators (0 to 1)")
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"field {name!r} is {score}, outside the share of annotators 0 to 1")
    return score


def _integral(value: Any) -> int | str:
    """An id column as written: pandas reads integer ids of a CSV with gaps as floats (12.0 -> 12)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    written: int | str = value
    return written
