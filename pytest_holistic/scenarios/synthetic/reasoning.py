"""HELM's synthetic reasoning (after LIME, Wu et al. 2021): rules of symbols and operators, filled with words.

HELM 0.5.16's ``SyntheticReasoningScenario`` (helm/benchmark/scenarios/synthetic_reasoning_scenario.py), drawn as it
draws, from numpy's legacy generator seeded with ``seed``, so the same mode and seed give HELM's instances text for
text. HELM draws one sample after another (1000 train, then 5000 valid, then 5000 test: ``id0``..``id10999``), each
from these draws in this order: 2-3 rule symbols from X, Y, Z and 2-3 operators from + - * =, both with
replacement, shuffled together into the pattern; for each distinct symbol (sorted) 1-2 words with replacement from
HELM's animals and fruits, twice (two substitutions); in ``pattern_match`` mode only, three more patterns from the
distinct symbols and the operators, then the four shuffled (so that mode's stream runs ahead of the others' from
its second sample on). The modes:

* ``pattern_match``: the four patterns and the first result; the target is the true pattern. HELM does not check
  the three others, so one can equal the true pattern or fit the result as well;
* ``variable_substitution``: the pattern and the first substitution (``X by " apple kiwi " , Y by " lion "``); the
  target is the result;
* ``induction``: the two results; the target is ``Rule: <pattern>``.

A sample's text does not depend on how many are drawn, only on its position, so ``train``, ``valid`` and ``test``
keep the first that many of HELM's split at HELM's positions: the instance at position n is HELM's ``id<n>``,
whatever the sizes.
"""

from __future__ import annotations

from ...errors import ScenarioError
from ..instance import Instance, Reference
from ..scenario import Scenario
from ._legacy_numpy import LegacyRandomState

MODES = ("pattern_match", "variable_substitution", "induction")
RULE_SYMBOLS = ("X", "Y", "Z")
OPERATORS = ("+", "-", "*", "=")
ANIMALS = ("zebra", "cobra", "stork", "penguin", "shark", "lion", "buffalo", "whale", "seal", "eagle", "horse", "rat")
FRUITS = ("apple", "peach", "watermelon", "banana", "grape", "kiwi", "pear", "strawberry", "blueberry", "blackberry")
WORDS = ANIMALS + FRUITS
"""HELM's word list, in its order (a draw is an index into it)."""
HELM_SIZES = {"train": 1000, "valid": 5000, "test": 5000}
"""HELM's split sizes, in the order it draws them; a split's samples start where the previous split's end."""


def _substitution(rng: LegacyRandomState, symbols: list[str]) -> tuple[dict[str, str], str]:
    mapping = {symbol: " ".join(rng.choice(WORDS, rng.randint(1, 3))) for symbol in symbols}
    return mapping, " , ".join(f'{symbol} by " {words} "' for symbol, words in mapping.items())


def _pattern(rng: LegacyRandomState, symbols: list[str], operators: list[str]) -> list[str]:
    pattern = symbols + operators
    rng.shuffle(pattern)
    return pattern


def _sample(rng: LegacyRandomState, mode: str) -> tuple[str, str]:
    """One of HELM's samples: every draw made in HELM's order (the pattern-match ones last, in that mode only)."""
    symbols = rng.choice(RULE_SYMBOLS, rng.randint(2, 4))
    distinct = sorted(set(symbols))
    operators = rng.choice(OPERATORS, rng.randint(2, 4))
    pattern = _pattern(rng, symbols, operators)
    mapping, mapping_text = _substitution(rng, distinct)
    second, _ = _substitution(rng, distinct)
    rule = " ".join(pattern)
    result = " ".join(mapping.get(token, token) for token in pattern)
    if mode == "induction":
        return f"Two results: {result} | {' '.join(second.get(token, token) for token in pattern)}", f"Rule: {rule}"
    if mode == "variable_substitution":
        return f"Rules: {rule} | Substitutions: {mapping_text}", result
    options = [" ".join(_pattern(rng, distinct, operators)) for _ in range(3)] + [rule]
    rng.shuffle(options)
    return f"Rules: {' | '.join(options)} | Result: {result}", rule


def synthetic_reasoning(
    mode: str, *, train: int = 1000, valid: int = 5000, test: int = 5000, seed: int = 42
) -> Scenario:
    """HELM's synthetic reasoning in one ``mode``: the first ``train``, ``valid`` and ``test`` instances of HELM's
    splits (at most its 1000, 5000 and 5000) from ``seed``.

    Ids are ``<mode>-<split>-<n>``; ``helm_id`` is HELM's ``id<position>``. The train split supplies few-shot
    examples. Reaching the test split draws HELM's 6000 samples before it (a fraction of a second).
    """
    if mode not in MODES:
        raise ScenarioError(f"synthetic_reasoning: mode {mode!r} is not one of {', '.join(MODES)}; pick one of them")
    sizes = {"train": train, "valid": valid, "test": test}
    for split, count in sizes.items():
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= HELM_SIZES[split]:
            raise ScenarioError(f"synthetic_reasoning: {split}={count!r} must be a whole number from 0 to {HELM_SIZES[split]}")
    if valid + test == 0:
        raise ScenarioError("synthetic_reasoning: valid=0 and test=0 give no instances to evaluate; ask for at least one")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ScenarioError(f"synthetic_reasoning: seed={seed!r} must be a whole number from 0 to 2**32 - 1 (numpy's seeds)")

    def instances() -> list[Instance]:
        rng = LegacyRandomState(seed)
        made: list[Instance] = []
        start = 0
        for split, size in HELM_SIZES.items():
            if not any(sizes[later] for later in list(HELM_SIZES)[list(HELM_SIZES).index(split) :]):
                break  # nothing asked from here on: stop drawing
            for index in range(size):
                source, target = _sample(rng, mode)
                if index < sizes[split]:
                    made.append(
                        Instance(
                            id=f"{mode}-{split}-{index}",
                            input=source,
                            references=(Reference(target),),
                            split=split,
                            helm_id=f"id{start + index}",
                        )
                    )
            start += size
        return made

    return Scenario(
        f"synthetic_reasoning_{mode}", local=instances, description=f"HELM synthetic reasoning, mode {mode}, seed {seed}"
    )
