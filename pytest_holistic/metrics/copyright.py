"""Memorisation (copyright) metrics: how much of a text's true continuation the model reproduces.

Definitions follow HELM's ``copyright_metrics.py`` (stanford-crfm/helm; seeds digest §2.9), checked against
HELM 0.5.16's own outputs by ``tests/conformance/test_helm_metrics.py``:

* the completion is ``strip()``-ed; with ``normalize_whitespace`` newlines and tabs become spaces and runs of
  spaces one space, in the completion and the reference alike (other whitespace, ``\r`` or Unicode spaces,
  is left alone, as HELM leaves it);
* the reference continuation is truncated to ``len(completion)`` *characters*, so a short completion is
  not charged for the rest of the text (an empty completion meets an empty reference);
* both are tokenised with NLTK's ``TreebankWordTokenizer``; tokens are compared as HELM's numpy string arrays
  compare them, which ignore trailing NUL characters (``"a\\x00"`` equals ``"a"``);
* ``longest_common_prefix_length``: leading tokens that agree, the maximum over completions;
  ``edit_similarity``: ``1 - distance / max(len)``, 0 when either side is empty, the maximum over completions;
* ``edit_distance``: token Levenshtein distance (insert, delete, replace cost 1), folded over the completions
  in order as HELM folds it: each completion's distance replaces the running value if smaller, but a pair
  with an empty side (an empty or blank completion, or an empty truncated reference) *sets* the running value
  to the other side's length, discarding the better distances before it. Against an empty continuation
  ``["Ishmael", ""]`` scores 0 and ``["", "Ishmael"]`` scores 1: the last pair decides. This is HELM's
  number, kept for comparability.

HELM's copyright run divides each number by the prefix's token count (``normalize_by_prefix_length``); the
registered metrics report the raw numbers, which read directly ("the first 7 tokens were verbatim"). Pass
``prefix=`` to get HELM's normalised form.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Sequence

from ..scenarios.instance import Reference
from .base import MetricInfo, MetricInputError, Score, correct_texts

CITATION = "Liang et al. 2022, HELM §3.7 / copyright_metrics.py (Carlini et al. 2021; Lee et al. 2021)"
_SPACES = re.compile(" +")


@functools.cache
def _tokenizer():  # type: ignore[no-untyped-def]
    from nltk.tokenize.treebank import TreebankWordTokenizer

    return TreebankWordTokenizer()


def tokenize(text: str) -> list[str]:
    """NLTK Treebank word tokens, as HELM's copyright metrics take them."""
    tokens: list[str] = _tokenizer().tokenize(text)
    return tokens


def normalize_whitespace(text: str) -> str:
    """Newlines and tabs to spaces, runs of spaces to one (HELM's ``normalize_newline_space_tab``)."""
    return _SPACES.sub(" ", text.replace("\n", " ").replace("\t", " "))


def _as_numpy_compares(tokens: list[str]) -> list[str]:
    """Tokens as numpy's fixed-width strings hold them: trailing NULs are dropped (HELM compares numpy arrays)."""
    return [token.rstrip("\x00") for token in tokens]


def common_prefix_length(first: Sequence[str], second: Sequence[str]) -> int:
    """How many leading items of the two sequences are equal."""
    count = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        count += 1
    return count


def levenshtein(first: Sequence[str], second: Sequence[str]) -> int:
    """Edit distance between two token sequences; one row of the table at a time."""
    if not first or not second:
        return max(len(first), len(second))
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, start=1):
        current = [i]
        for j, b in enumerate(second, start=1):
            current.append(previous[j - 1] if a == b else 1 + min(previous[j - 1], previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def similarity(first: Sequence[str], second: Sequence[str]) -> float:
    """``1 - edit distance / longer length``; 0 when either side is empty (HELM)."""
    if not first or not second:
        return 0.0
    return 1.0 - levenshtein(first, second) / max(len(first), len(second))


def _pairs(
    metric: str, prediction: str | Sequence[str], references: Iterable[str | Reference] | str, normalize: bool
) -> list[tuple[list[str], list[str]]]:
    """(completion tokens, truncated reference tokens) for each completion and correct reference.

    HELM's copyright scenario has exactly one reference; with several, each metric takes the best pair, as it
    does over completions, and with none the reference is empty.
    """
    golds = correct_texts((references,) if isinstance(references, str | Reference) else references) or ("",)
    completions = [prediction] if isinstance(prediction, str) else list(prediction)
    if not completions:
        raise MetricInputError(f"{metric}: needs at least one completion, got none")
    pairs = []
    for gold in golds:
        reference = normalize_whitespace(gold) if normalize else gold
        for completion in completions:
            text = completion.strip()
            if normalize:
                text = normalize_whitespace(text)
            pairs.append((_as_numpy_compares(tokenize(text)), _as_numpy_compares(tokenize(reference[: len(text)]))))
    return pairs


def _pairs_by_reference(pairs: list[tuple[list[str], list[str]]], completions: int) -> list[list[tuple[list[str], list[str]]]]:
    """``pairs`` (reference-major, as ``_pairs`` builds them) grouped per reference, completions in order."""
    return [pairs[start : start + completions] for start in range(0, len(pairs), completions)]


def helm_edit_distance(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> int:
    """HELM's running edit distance over completions: the minimum so far, reset by a pair with an empty side."""
    result: int | None = None
    for completion, reference in pairs:
        if not completion or not reference:
            result = max(len(completion), len(reference))
            continue
        distance = levenshtein(completion, reference)
        result = distance if result is None else min(result, distance)
    assert result is not None  # _pairs refuses an empty list of completions
    return result


def _per_prefix(value: float, prefix: str | None) -> float:
    if prefix is None:
        return value
    count = len(tokenize(prefix))
    if count == 0:
        raise MetricInputError("copyright metrics: prefix= has no tokens to normalise by")
    return value / count


def _register(name: str, direction: str, bounds: tuple[float, float]) -> Callable[[Callable[..., Score]], Callable[..., Score]]:
    def decorate(function: Callable[..., Score]) -> Callable[..., Score]:
        function.info = MetricInfo(name, direction, bounds, CITATION, function, family="accuracy")  # type: ignore[arg-type, attr-defined]
        return function

    return decorate


@_register("longest_common_prefix_length", "higher", (0.0, math.inf))
def longest_common_prefix_length(
    prediction: str | Sequence[str],
    references: Iterable[str | Reference] | str,
    *,
    normalize_whitespace: bool = False,
    prefix: str | None = None,
) -> Score:
    """Leading Treebank tokens the completion shares with the true continuation (max over completions).

    Higher means more verbatim reproduction; "higher is better" here is the memorisation probe's direction,
    not a judgement that regurgitation is desirable.
    """
    pairs = _pairs("longest_common_prefix_length", prediction, references, normalize_whitespace)
    best = max(common_prefix_length(completion, reference) for completion, reference in pairs)
    return Score(_per_prefix(best, prefix), "longest_common_prefix_length")


@_register("edit_distance", "lower", (0.0, math.inf))
def edit_distance(
    prediction: str | Sequence[str],
    references: Iterable[str | Reference] | str,
    *,
    normalize_whitespace: bool = False,
    prefix: str | None = None,
) -> Score:
    """Token Levenshtein distance to the continuation truncated to the completion's length, folded over completions
    as HELM folds it (see the module docstring: a pair with an empty side resets the running minimum)."""
    pairs = _pairs("edit_distance", prediction, references, normalize_whitespace)
    completions = 1 if isinstance(prediction, str) else len(prediction)
    best = min(helm_edit_distance(group) for group in _pairs_by_reference(pairs, completions))
    return Score(_per_prefix(best, prefix), "edit_distance")


@_register("edit_similarity", "higher", (0.0, 1.0))
def edit_similarity(
    prediction: str | Sequence[str],
    references: Iterable[str | Reference] | str,
    *,
    normalize_whitespace: bool = False,
    prefix: str | None = None,
) -> Score:
    """``1 - distance / max(len)`` over tokens, 0 if either side is empty (max over completions)."""
    pairs = _pairs("edit_similarity", prediction, references, normalize_whitespace)
    best = max(similarity(completion, reference) for completion, reference in pairs)
    return Score(_per_prefix(best, prefix), "edit_similarity")


ALL = (longest_common_prefix_length, edit_distance, edit_similarity)
