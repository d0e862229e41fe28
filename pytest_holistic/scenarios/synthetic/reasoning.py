"""HELM's synthetic reasoning (after LIME, Wu et al. 2021): rules of symbols and operators, filled with words.

Procedure from HELM ``synthetic_reasoning_scenario.py`` (stanford-crfm/helm): a pattern is 2-3 rule symbols drawn
with replacement from X, Y, Z plus 2-3 operators drawn with replacement from + - * =, shuffled together; a
substitution maps each distinct symbol (in sorted order) to 1-2 words drawn with replacement. Three modes:

* ``pattern_match``: four patterns (the true one among three others built from the same operators and the
  distinct symbols) and a result; the target is the true pattern;
* ``variable_substitution``: a pattern and a substitution (``X by " apple kiwi " , Y by " lion "``); the target
  is the result;
* ``induction``: two results of one pattern under two substitutions; the target is ``Rule: <pattern>``.

HELM draws its three others freely, so one can equal the true pattern or fit the result as well; here they are
redrawn until all four are different and only the true one fits, so every instance has exactly one right answer.
HELM's sizes are 1000 train, 5000 valid and 5000 test instances with seed 42; the words are this project's own.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ...errors import ScenarioError
from ..instance import Instance, Reference
from ..scenario import Scenario
from ._common import check_sizes

MODES = ("pattern_match", "variable_substitution", "induction")
RULE_SYMBOLS = ("X", "Y", "Z")
OPERATORS = ("+", "-", "*", "=")
WORDS = (
    "otter",
    "heron",
    "badger",
    "camel",
    "falcon",
    "gecko",
    "lynx",
    "moose",
    "panda",
    "tiger",
    "walrus",
    "yak",
    "apricot",
    "cherry",
    "fig",
    "lemon",
    "mango",
    "melon",
    "olive",
    "plum",
    "quince",
    "raisin",
)


def substitute(pattern: Sequence[str], mapping: dict[str, str]) -> list[str]:
    """The pattern with each rule symbol replaced by its words (operators stay)."""
    return [mapping.get(token, token) for token in pattern]


def fits(pattern: Sequence[str], result: Sequence[str]) -> bool:
    """Whether some substitution of 1-2 words per symbol turns ``pattern`` into the ``result`` tokens."""

    def walk(p: int, r: int, bound: dict[str, tuple[str, ...]]) -> bool:
        if p == len(pattern):
            return r == len(result)
        token = pattern[p]
        if token not in RULE_SYMBOLS:
            return r < len(result) and result[r] == token and walk(p + 1, r + 1, bound)
        if token in bound:
            words = bound[token]
            return tuple(result[r : r + len(words)]) == words and walk(p + 1, r + len(words), bound)
        for size in (1, 2):
            words = tuple(result[r : r + size])
            if len(words) == size and not any(word in OPERATORS for word in words):
                if walk(p + 1, r + size, {**bound, token: words}):
                    return True
        return False

    return walk(0, 0, {})


def _substitution(rng: random.Random, symbols: Sequence[str]) -> tuple[dict[str, str], str]:
    mapping = {symbol: " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 2))) for symbol in symbols}
    text = " , ".join(f'{symbol} by " {words} "' for symbol, words in mapping.items())
    return mapping, text


def _pattern(rng: random.Random, operators: Sequence[str], symbols: Sequence[str]) -> list[str]:
    pattern = [*symbols, *operators]
    rng.shuffle(pattern)
    return pattern


def _one(rng: random.Random, mode: str) -> tuple[str, str]:
    while True:
        symbols = [rng.choice(RULE_SYMBOLS) for _ in range(rng.randint(2, 3))]
        distinct = sorted(set(symbols))
        operators = [rng.choice(OPERATORS) for _ in range(rng.randint(2, 3))]
        pattern = _pattern(rng, operators, symbols)
        mapping, mapping_text = _substitution(rng, distinct)
        result = " ".join(substitute(pattern, mapping))
        rule = " ".join(pattern)
        if mode == "variable_substitution":
            return f"Rules: {rule} | Substitutions: {mapping_text}", result
        if mode == "induction":
            second, _ = _substitution(rng, distinct)
            return f"Two results: {result} | {' '.join(substitute(pattern, second))}", f"Rule: {rule}"
        others: list[str] = []
        for _ in range(30):
            other = _pattern(rng, operators, distinct)
            text = " ".join(other)
            if text != rule and text not in others and not fits(other, result.split()):
                others.append(text)
                if len(others) == 3:
                    break
        if len(others) == 3:  # else too few distinct non-fitting patterns exist for these operators: draw again
            options = [*others, rule]
            rng.shuffle(options)
            return f"Rules: {' | '.join(options)} | Result: {result}", rule


def synthetic_reasoning(mode: str, *, train: int = 20, test: int = 30, seed: int = 42) -> Scenario:
    """HELM's synthetic reasoning in one ``mode`` as a scenario: ``train`` and ``test`` instances from ``seed``.

    Ids are ``<mode>-<split>-<n>``, stable for a given seed; the train split supplies few-shot examples.
    """
    if mode not in MODES:
        raise ScenarioError(f"synthetic_reasoning: mode {mode!r} is not one of {', '.join(MODES)}; pick one of them")
    check_sizes("synthetic_reasoning", train, test)

    def instances() -> list[Instance]:
        rng = random.Random(f"synthetic_reasoning:{mode}:{seed}")
        made = []
        for split, count in (("train", train), ("test", test)):
            for index in range(count):
                source, target = _one(rng, mode)
                made.append(Instance(id=f"{mode}-{split}-{index}", input=source, references=(Reference(target),), split=split))
        return made

    return Scenario(
        f"synthetic_reasoning_{mode}", local=instances, description=f"HELM synthetic reasoning, mode {mode}, seed {seed}"
    )
