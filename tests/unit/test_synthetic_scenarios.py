"""The seeded generators: deterministic, stable ids, and every instance right by construction.

Each check re-derives the answer with code written here, independently of the generators.
"""

from __future__ import annotations

import re

import pytest

from pytest_holistic.errors import ScenarioError
from pytest_holistic.scenarios.bbq_tags import read_bbq_tags
from pytest_holistic.scenarios.synthetic import bbq, dyck_language, memorisation, numeracy, synthetic_reasoning

GENERATORS = {
    "pattern_match": lambda seed: synthetic_reasoning("pattern_match", train=10, valid=0, test=20, seed=seed),
    "variable_substitution": lambda seed: synthetic_reasoning("variable_substitution", train=10, valid=0, test=20, seed=seed),
    "induction": lambda seed: synthetic_reasoning("induction", train=10, valid=0, test=20, seed=seed),
    "dyck": lambda seed: dyck_language(train=5, test=20, seed=seed),
    "numeracy_linear": lambda seed: numeracy("linear", train=5, test=20, seed=seed),
    "numeracy_parabola": lambda seed: numeracy("parabola", train=5, test=20, seed=seed),
    "numeracy_plane": lambda seed: numeracy("plane", train=5, test=20, seed=seed),
    "numeracy_paraboloid": lambda seed: numeracy("paraboloid", train=5, test=20, seed=seed),
    "bbq": lambda seed: bbq(train=10, test=30, seed=seed),
    "memorisation": lambda seed: memorisation(seed=seed),
}


def records(scenario) -> list[dict]:
    return [instance.to_record() for instance in scenario.load().instances]


@pytest.mark.parametrize("name", GENERATORS)
def test_same_seed_same_instances_and_different_seed_different(name: str) -> None:
    make = GENERATORS[name]
    assert records(make(7)) == records(make(7))
    assert records(make(7)) != records(make(8))


@pytest.mark.parametrize("name", GENERATORS)
def test_ids_are_stable_unique_and_splits_present(name: str) -> None:
    first, again = GENERATORS[name](3).load().instances, GENERATORS[name](3).load().instances
    ids = [(i.split, i.id) for i in first]
    assert ids == [(i.split, i.id) for i in again]
    assert len(set(ids)) == len(ids)
    assert {i.split for i in first} == ({"test"} if name == "memorisation" else {"train", "test"})


def test_sizes_are_as_asked_and_bad_arguments_are_one_line_errors() -> None:
    loaded = synthetic_reasoning("induction", train=4, valid=0, test=6).load()
    assert (len(loaded.split("train")), len(loaded.split("test"))) == (4, 6)
    assert [i.id for i in loaded.split("test")][:2] == ["induction-test-0", "induction-test-1"]
    with pytest.raises(ScenarioError, match="mode 'deduction'"):
        synthetic_reasoning("deduction")
    with pytest.raises(ScenarioError, match="test=5001 must be a whole number from 0 to 5000"):
        synthetic_reasoning("induction", test=5001)
    with pytest.raises(ScenarioError, match="valid=0 and test=0"):
        synthetic_reasoning("induction", valid=0, test=0)
    with pytest.raises(ScenarioError, match="seed=-1"):
        dyck_language(seed=-1)
    with pytest.raises(ScenarioError, match="relation_type 'cubic'"):
        numeracy("cubic")
    with pytest.raises(ScenarioError, match="pairs=5"):
        dyck_language(pairs=5)
    with pytest.raises(ScenarioError, match="test=0"):
        bbq(test=0)
    with pytest.raises(ScenarioError, match="exceeds"):
        bbq(train=50, test=50).load()


# --- synthetic reasoning: answers checked with a regex matcher (backreferences), not the generator's walker ---

SYMBOLS = ("X", "Y", "Z")
WORD = r"[a-z]+"


def pattern_regex(pattern: list[str]) -> re.Pattern[str]:
    parts, seen = [], set()
    for token in pattern:
        if token in SYMBOLS:
            parts.append(f"(?P={token})" if token in seen else f"(?P<{token}>{WORD}(?: {WORD})?)")
            seen.add(token)
        else:
            parts.append(re.escape(token))
    return re.compile(" ".join(parts))


def test_pattern_match_answer_is_one_of_the_four_rules_and_yields_the_result() -> None:
    """HELM draws the three other rules without checking them, so another one may fit too (and some do)."""
    several_fit = 0
    for instance in synthetic_reasoning("pattern_match", train=0, valid=0, test=200, seed=1).load().instances:
        rules, result = re.fullmatch(r"Rules: (.*) \| Result: (.*)", instance.input).groups()
        options = rules.split(" | ")
        answer = instance.correct_references[0]
        assert len(options) == 4 and answer in options
        fitting = [option for option in options if pattern_regex(option.split()).fullmatch(result)]
        assert answer in fitting
        several_fit += len(set(fitting)) > 1
    assert several_fit > 0


def test_variable_substitution_answer_is_the_rule_with_words_put_in() -> None:
    for instance in synthetic_reasoning("variable_substitution", train=0, valid=0, test=60, seed=2).load().instances:
        rule, substitutions = re.fullmatch(r"Rules: (.*) \| Substitutions: (.*)", instance.input).groups()
        mapping = dict(re.findall(r'([XYZ]) by " ([a-z ]+?) "', substitutions))
        assert set(mapping) == {token for token in rule.split() if token in SYMBOLS}
        expected = " ".join(mapping.get(token, token) for token in rule.split())
        assert instance.correct_references == (expected,)
        assert 2 <= sum(token in SYMBOLS for token in rule.split()) <= 3
        assert 2 <= sum(token in "+-*=" for token in rule.split()) <= 3


def test_induction_answer_is_a_rule_that_yields_both_results() -> None:
    for instance in synthetic_reasoning("induction", train=0, valid=0, test=60, seed=3).load().instances:
        first, second = re.fullmatch(r"Two results: (.*) \| (.*)", instance.input).groups()
        (target,) = instance.correct_references
        assert target.startswith("Rule: ")
        regex = pattern_regex(target.removeprefix("Rule: ").split())
        assert regex.fullmatch(first) and regex.fullmatch(second)


def test_reasoning_sizes_keep_helms_positions_and_ids() -> None:
    """A smaller draw is the same instances at HELM's positions: split by split, the first of the larger draw."""
    small = synthetic_reasoning("pattern_match", train=3, valid=2, test=2).load().instances
    large = {i.helm_id: i for i in synthetic_reasoning("pattern_match", train=10, valid=5, test=5).load().instances}
    assert [i.helm_id for i in small] == ["id0", "id1", "id2", "id1000", "id1001", "id6000", "id6001"]
    assert [i.split for i in small] == ["train"] * 3 + ["valid"] * 2 + ["test"] * 2
    assert all(large[i.helm_id] == i for i in small)


def test_reasoning_draws_are_the_same_in_every_mode() -> None:
    """HELM draws every sample's pattern and both substitutions in every mode, so variable substitution and induction
    show one rule at one position (pattern matching draws more per sample, so only its first sample shares it)."""
    rules = {}
    for mode in ("variable_substitution", "induction"):
        for instance in synthetic_reasoning(mode, train=5, valid=0, test=5, seed=9).load().instances:
            target = instance.correct_references[0]
            rule = {
                "variable_substitution": instance.input.removeprefix("Rules: ").split(" | ")[0],
                "induction": target.removeprefix("Rule: "),
            }[mode]
            assert rules.setdefault(instance.helm_id, rule) == rule, (mode, instance.helm_id)
    first = synthetic_reasoning("pattern_match", train=1, valid=0, test=1, seed=9).load().instances[0]
    assert first.correct_references[0] == rules["id0"]


# --- Dyck: the answer closes the prefix exactly and the whole word is balanced ---

CLOSER = {"(": ")", "[": "]", "{": "}"}


def balanced(symbols: list[str]) -> bool:
    depth_stack: list[str] = []
    for symbol in symbols:
        if symbol in CLOSER:
            depth_stack.append(CLOSER[symbol])
        elif not depth_stack or depth_stack.pop() != symbol:
            return False
    return not depth_stack


def test_dyck_answer_completes_a_balanced_word_with_one_to_three_closers() -> None:
    scenario = dyck_language(pairs=3, train=3, test=60, seed=5).load()
    for instance in scenario.instances:
        prefix = instance.input.split(" ")
        (answer,) = instance.correct_references
        assert answer.startswith(" ")
        closing = answer.split()
        assert 1 <= len(closing) <= 3 and set(closing) <= set(CLOSER.values())
        assert set(prefix) <= set(CLOSER) | set(CLOSER.values())
        assert balanced(prefix + closing)
        # no shorter closing works: the answer is the only completion by closers alone
        assert not any(balanced(prefix + closing[:k]) for k in range(len(closing)))
        low, high = (4, 50) if instance.split == "train" else (52, 100)
        assert len(prefix) + len(closing) <= high and len(prefix) < high
    inputs = [instance.input for instance in scenario.instances]
    assert len(set(inputs)) == len(inputs)


def test_dyck_fewer_test_instances_are_a_prefix_with_helms_positional_ids() -> None:
    short = dyck_language(pairs=2, train=3, test=4, seed=6).load().instances
    longer = dyck_language(pairs=2, train=3, test=9, seed=6).load().instances
    assert longer[: len(short)] == short
    assert [i.helm_id for i in longer] == [f"id{n}" for n in range(12)]


# --- numeracy: every shown point and the answer lie on the tagged polynomial ---


def polynomial_value(relation: str, coefficients: list[int], point: tuple[int, ...]) -> int:
    if relation == "linear":
        a, b = coefficients
        return a * point[0] + b
    if relation == "parabola":
        a, b, c = coefficients
        return a * point[0] ** 2 + b * point[0] + c
    if relation == "plane":
        a, b, c = coefficients
        return a * point[0] + b * point[1] + c
    a, b, c, d, e, f = coefficients
    x, y = point
    return a * x * x + b * x * y + c * y * y + d * x + e * y + f


DOMAIN = {"linear": (-100, 100), "parabola": (0, 200), "plane": (-10, 10), "paraboloid": (0, 20)}


@pytest.mark.parametrize("relation", DOMAIN)
def test_numeracy_points_and_answer_satisfy_the_function(relation: str) -> None:
    for instance in numeracy(relation, points=12, train=2, test=25, seed=11).load().instances:
        (tag,) = [t for t in instance.tags if t.startswith("coefficients:")]
        coefficients = [int(c) for c in tag.removeprefix("coefficients:").split()]
        header, *rows, query = instance.input.split("\n")
        width = 2 if relation in ("linear", "parabola") else 3
        assert header == ", ".join("xyz"[:width])
        assert len(rows) == 12
        low, high = DOMAIN[relation]
        seen = set()
        for row in rows:
            *point, value = (int(v) for v in row.split(", "))
            assert polynomial_value(relation, coefficients, tuple(point)) == value
            assert all(low <= v <= high for v in point) and (width == 2 or point[0] <= point[1])
            seen.add(tuple(point))
        point = tuple(int(v) for v in query.split(", "))
        assert point not in seen and len(point) == width - 1
        assert instance.correct_references == (str(polynomial_value(relation, coefficients, point)),)
        assert coefficients[-1] != 0


# --- BBQ: the gold answer follows the context, and the tags name the right options ---


def test_bbq_gold_answers_and_tags_follow_the_bbq_rules() -> None:
    instances = bbq(train=0, test=72, seed=4).load().instances
    assert {i.group for i in instances} == {"Age", "Gender_identity", "Nationality"}
    kinds = set()
    for instance in instances:
        tags = read_bbq_tags(instance.tags)
        assert tags is not None and len(instance.references) == 3
        assert sorted([tags.target, tags.unknown, tags.non_target]) == [0, 1, 2]
        (gold,) = instance.correct_indices
        context = instance.input.split("\nQuestion: ")[0]
        kinds.add((tags.ambiguous, tags.negative))
        if tags.ambiguous:
            assert gold == tags.unknown
            continue
        # the disambiguating sentence reads "The <doer> ..., while the <other> ..."
        doer = re.search(r"\. The ([A-Za-z ]+?) (?:kept|mixed|could|burnt)", context)[1]
        doer_index = next(k for k, text in enumerate(instance.choices) if text == f"The {doer}")
        other_index = ({tags.target, tags.non_target} - {doer_index}).pop()
        assert gold == (doer_index if tags.negative else other_index)
    assert kinds == {(a, n) for a in (True, False) for n in (True, False)}


def test_memorisation_prefix_plus_continuation_is_the_shipped_passage() -> None:
    import json

    from pytest_holistic.scenarios.synthetic.memorisation import PASSAGES

    texts = {row["id"]: row["text"] for row in map(json.loads, PASSAGES.read_text(encoding="utf-8").splitlines())}
    instances = memorisation(min_prefix_words=15, max_prefix_words=25, seed=9).load().instances
    assert [i.id for i in instances] == list(texts) and len(texts) == 10
    for instance in instances:
        (continuation,) = instance.correct_references
        assert instance.input + continuation == texts[instance.id]
        assert 15 <= len(instance.input.split(" ")) <= 25


def test_generators_touch_no_global_random_state() -> None:
    import random

    random.seed(123)
    before = random.random()
    random.seed(123)
    for make in GENERATORS.values():
        make(0).load()
    assert random.random() == before
