"""Row functions and orderings for HELM Lite's own scenarios (GSM8K, MATH), as HELM's scenario classes build them.

Facts carried over (HELM 0.5.16, stanford-crfm/helm, src/helm/benchmark/scenarios/):
* gsm_scenario.py: the question is the input; the one correct reference is the worked answer with ``####`` replaced by
  ``The answer is``, every newline by a space, and a period appended; train, then test, in file order.
* math_scenario.py: the whole dataset is sorted by ``problem`` and then shuffled with ``datasets``' ``shuffle(seed=42)``
  (each split on its own), and only then filtered to one subject (``type``) and one level; train, then test. With
  chain of thought the reference is the whole solution, otherwise the content of its last ``\\boxed{}`` (HELM 0.5.16
  then fails with a KeyError on a row without one; the suite runs chain of thought, as HELM Lite does). HELM's subject keys name the ``type`` values (``counting_and_probability`` is ``Counting &
  Probability``).
* med_qa_scenario.py: the US 4-option questions; every option a reference in the file's order (A to D), its text with
  trailing quotes and spaces stripped, the one under ``answer_idx`` correct; the dev file is HELM's valid split;
  train, then valid, then test.
* wmt_14_scenario.py: the source sentence is the input and its translation the one reference; the train split is
  shuffled as ``datasets`` does with seed 42, cut to its first 20,000 pairs and deduplicated by the target sentence
  (the first pair with a target kept); then the validation and test splits whole, in order.
* legalbench_scenario.py: the input is one ``<name>: <value>`` line per column in the task's field order (HELM reads
  the order, the label column and the output noun from LegalBench's ``helm_prompt_settings.jsonl``); the label is the one
  reference; train, then test.
Field names follow the hub datasets ``openai/gsm8k`` (config ``main``), ``hendrycks/competition_math``,
``GBaker/MedQA-USMLE-4-options`` (HELM's JSONL files' schema), ``wmt/wmt14`` and ``nguha/legalbench``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from functools import partial
from typing import Any

from .helm_rows import _carried
from .helm_rows_mc import Reshaped, dataset_permutation
from .instance import Instance
from .loaders import Source

MATH_SUBJECTS: Mapping[str, str] = {
    "number_theory": "Number Theory",
    "intermediate_algebra": "Intermediate Algebra",
    "algebra": "Algebra",
    "prealgebra": "Prealgebra",
    "geometry": "Geometry",
    "counting_and_probability": "Counting & Probability",
    "precalculus": "Precalculus",
}
"""HELM's MATH subject keys and the dataset's ``type`` they select."""
_SUBJECT_KEYS = {kind: key for key, kind in MATH_SUBJECTS.items()}
LEVEL_TAG = "level:"
"""A MATH instance's tag naming its level (``level:1`` for the dataset's ``Level 1``)."""
MATH_SHUFFLE_SEED = 42
WMT14_SHUFFLE_SEED = 42
WMT14_MAX_TRAIN = 20_000
"""HELM keeps this many shuffled WMT14 training pairs before deduplicating them (``MAX_TRAIN_INSTANCES``)."""


def _text(row: Mapping[str, Any], column: str) -> str:
    value = row.get(column)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"column {column!r} must be a non-empty string, got {value!r:.60}")
    return value


# --- GSM8K -----------------------------------------------------------------------------------------------------------


def gsm8k_answer(answer: str) -> str:
    """HELM's reference for a GSM8K solution: ``#### n`` reads ``The answer is n``, on one line, ending in a period."""
    return answer.replace("####", "The answer is").replace("\n", " ") + "."


def gsm8k_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A GSM8K row (``question``, ``answer`` ending in ``#### n``) as its question and HELM's one reference."""
    answer = _text(row, "answer")
    if "####" not in answer:
        raise ValueError("column 'answer' has no '#### <number>' line; GSM8K solutions end with the final answer so")
    return {**_carried(row), "question": _text(row, "question"), "references": [gsm8k_answer(answer)]}


# --- MATH ------------------------------------------------------------------------------------------------------------


def math_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A MATH row as its problem, the whole solution as the reference (chain of thought), its subject and level.

    The group is HELM's subject key, so a per-group run is HELM's one run per subject and ``-k algebra`` selects one.
    """
    kind = _text(row, "type")
    if kind not in _SUBJECT_KEYS:
        raise ValueError(f"column 'type' is {kind!r}, not one of MATH's subjects {sorted(_SUBJECT_KEYS)}")
    level = _text(row, "level").removeprefix("Level ").strip()
    return {
        **_carried(row),
        "problem": _text(row, "problem"),
        "references": [_text(row, "solution")],
        "group": _SUBJECT_KEYS[kind],
        "tags": [f"{LEVEL_TAG}{level}"],
    }


def _math_order(splits: tuple[str, ...], instances: list[Instance]) -> list[Instance]:
    ordered: list[Instance] = []
    for split in splits:
        rows = sorted((instance for instance in instances if instance.split == split), key=lambda row: row.input)
        ordered += [rows[position] for position in dataset_permutation(len(rows), MATH_SHUFFLE_SEED)]
    return ordered


def math_order(source: Source, splits: tuple[str, ...] = ("train", "test")) -> Reshaped:
    """HELM's MATH order: each split sorted by problem, then shuffled as ``datasets`` does with seed 42, train first.

    Applied to the whole dataset before any subject or level is picked, as HELM does, since the shuffle moves every
    row by the count of all rows.
    """
    note = "HELM's MATH order: sorted by problem, datasets' shuffle(seed=42), per split"
    return Reshaped(source, partial(_math_order, tuple(splits)), note)


def _kept(keep: Callable[[Instance], bool], instances: list[Instance]) -> list[Instance]:
    return [instance for instance in instances if keep(instance)]


def _has_tag(tag: str, instance: Instance) -> bool:
    return tag in instance.tags


def _in_groups(groups: frozenset[str], instance: Instance) -> bool:
    return instance.group in groups


def math_level(source: Source, level: str) -> Reshaped:
    """Only the MATH problems of one level (``"1"`` .. ``"5"``), as HELM's run for that level reads them."""
    return Reshaped(source, partial(_kept, partial(_has_tag, f"{LEVEL_TAG}{level}")), f"MATH level {level} only")


def only_groups(source: Source, groups: Collection[str]) -> Reshaped:
    """Only the instances of the named groups (HELM Lite's MMLU subjects), in the source's order."""
    chosen = frozenset(groups)
    return Reshaped(source, partial(_kept, partial(_in_groups, chosen)), f"groups {sorted(chosen)} only")


# --- MedQA -----------------------------------------------------------------------------------------------------------


def med_qa_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A MedQA row: the question, its four options in the file's order and the index of the one under ``answer_idx``.

    The file's ``dev`` split is HELM's ``valid``.
    """
    options = row.get("options")
    if not isinstance(options, Mapping) or len(options) != 4:
        raise ValueError(f"column 'options' must map four letters to option texts, got {options!r:.80}")
    letters = [str(letter) for letter in options]
    key = row.get("answer_idx")
    if key not in letters:
        raise ValueError(f"column 'answer_idx' is {key!r}, not one of the option letters {letters}")
    carried = _carried(row)
    if carried.get("split") == "dev":
        carried["split"] = "valid"
    choices = [str(text).rstrip('"').rstrip() for text in options.values()]
    return {**carried, "question": _text(row, "question"), "choices": choices, "answer": letters.index(key)}


# --- WMT14 -----------------------------------------------------------------------------------------------------------


def wmt14_row(source: str, target: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """A WMT14 pair (``translation: {cs: ..., en: ...}``) as the ``source`` sentence and its ``target`` reference.

    A shipped file's ``validation`` split is HELM's ``valid`` (the hub source maps it so by its ``splits``).
    """
    pair = row.get("translation")
    if not isinstance(pair, Mapping) or source not in pair or target not in pair:
        raise ValueError(f"column 'translation' must hold the languages {source!r} and {target!r}, got {pair!r:.80}")
    carried = _carried(row)
    if carried.get("split") == "validation":
        carried["split"] = "valid"
    return {**carried, "source": str(pair[source]), "references": [str(pair[target])]}


def wmt14_train_sample(dataset: Any) -> Any:
    """HELM's WMT14 training pairs: the split shuffled with datasets' seed 42, its first 20,000 kept."""
    shuffled = dataset.shuffle(seed=WMT14_SHUFFLE_SEED)
    return shuffled.select(range(min(WMT14_MAX_TRAIN, len(shuffled))))


def _first_per_target(instances: list[Instance]) -> list[Instance]:
    seen: set[str] = set()
    kept = []
    for instance in instances:
        target = instance.references[0].text
        if target not in seen:
            seen.add(target)
            kept.append(instance)
    return kept


def _wmt14_order(shuffle: bool, instances: list[Instance]) -> list[Instance]:
    train = [instance for instance in instances if instance.split == "train"]
    if shuffle:
        train = [train[position] for position in dataset_permutation(len(train), WMT14_SHUFFLE_SEED)][:WMT14_MAX_TRAIN]
    rest = [instance for split in ("valid", "test") for instance in instances if instance.split == split]
    return _first_per_target(train) + rest


def wmt14_order(source: Source, *, sampled: bool) -> Reshaped:
    """HELM's WMT14 instances: the training pairs shuffled, cut and deduplicated by target, then valid and test.

    ``sampled``: the source already shuffled and cut the train split (``wmt14_train_sample`` on the hub, where the
    split holds millions of pairs); a shipped file is shuffled here, as HELM would shuffle it.
    """
    note = "HELM's WMT14 training pairs: shuffled (seed 42), first 20,000, one per target; then valid and test"
    return Reshaped(source, partial(_wmt14_order, not sampled), note)


# --- LegalBench ------------------------------------------------------------------------------------------------------


def legalbench_row(fields: tuple[tuple[str, str], ...], label: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """A LegalBench row as HELM's input, ``<name>: <value>`` per ``(name, column)`` of ``fields``, and its label."""
    missing = [column for _, column in fields if column not in row]
    if missing or label not in row:
        raise ValueError(
            f"the row lacks the columns {missing or [label]}; a LegalBench task's rows hold {[c for _, c in fields]}"
        )
    text = "\n".join(f"{name}: {row[column]}" for name, column in fields)
    return {**_carried(row), "text": text, "references": [str(row[label])]}
