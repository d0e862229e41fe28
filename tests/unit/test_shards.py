"""How a test function's items are cut into shards: an instance's variants together, balanced sizes, a memory bound."""

from __future__ import annotations

from itertools import groupby

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.shards import assign_shards, instance_key, shard_base


def _items(base: str, groups: list[int]) -> list[str]:
    """Node ids of ``base``: instance ``i`` with ``groups[i]`` items (itself, then variants ``~v1``, ``~v2``...)."""
    return [f"{base}[i{i}{f'~v{v}' if v else ''}]" for i, size in enumerate(groups) for v in range(size)]


def _sizes(shards: dict[str, str], ids: list[str]) -> list[int]:
    """Shard sizes in order, checking that each shard is one contiguous run numbered from 0."""
    names = [shards[nodeid] for nodeid in ids]
    runs = [(name, len(list(members))) for name, members in groupby(names)]
    base = ids[0][: ids[0].index("[")]
    assert [name for name, _ in runs] == [f"{base}#shard{k}" for k in range(len(runs))]
    return [size for _, size in runs]


@pytest.mark.parametrize(
    ("nodeid", "base"),
    [
        ("suites/core/test_boolq.py::test_boolq[boolq-001]", "suites/core/test_boolq.py::test_boolq"),
        ("t.py::TestX::test_y[a[b]]", "t.py::TestX::test_y"),
        ("t.py::test_plain", None),
    ],
)
def test_shard_base(nodeid: str, base: str | None) -> None:
    assert shard_base(nodeid) == base


@pytest.mark.parametrize(
    ("nodeid", "key"),
    [
        ("s.py::t[boolq-001]", "boolq-001"),
        ("s.py::t[boolq-001~mild_mix]", "boolq-001"),
        ("s.py::t[boolq-001~typos~x]", "boolq-001"),
        ("s.py::T::t[a[1]~dialect]", "a[1]"),
        ("s.py::t[7]", "7"),
    ],
)
def test_instance_key_is_the_id_up_to_the_first_tilde(nodeid: str, key: str) -> None:
    assert instance_key(nodeid, nodeid[: nodeid.index("[")]) == key


def test_singletons_are_cut_into_balanced_contiguous_runs() -> None:
    ids = [f"a.py::t[{i}]" for i in range(5)] + ["a.py::plain"] + [f"b.py::u[{i}]" for i in range(3)]
    shards = assign_shards(ids, 2)
    # 5 items, size 2: ceil(5/2) = 3 shards, boundaries nearest 5/3 = 1.67 and 10/3 = 3.33, at 2 and 3.
    assert _sizes(shards, ids[:5]) == [2, 1, 2]
    assert "a.py::plain" not in shards
    # 3 items, size 2: 2 shards, the boundary at 1.5 is a tie between 1 and 2, which goes to the earlier.
    assert _sizes(shards, ids[6:]) == [1, 2]


def test_an_instance_and_its_variants_are_never_split() -> None:
    # Instances of 2, 3, 1, 2, 3, 1 items; size 4: the plain rule would cut at 4 and 8, splitting the second instance.
    ids = _items("s.py::t", [2, 3, 1, 2, 3, 1])
    shards = assign_shards(ids, 4)
    # 12 items, 3 shards: the target 4 moves to the instance boundary at 5 (1 away; 2 is 2 away); 8 is a boundary.
    assert _sizes(shards, ids) == [5, 3, 4]
    by_instance = {key: {shards[n] for n in members} for key, members in groupby(ids, lambda n: instance_key(n, "s.py::t"))}
    assert all(len(names) == 1 for names in by_instance.values())


def test_sizes_are_balanced_rather_than_a_short_last_shard() -> None:
    # 247 items (BoolQ) at 64: 4 shards, not 64, 64, 64, 55. Targets 61.75, 123.5 (a tie: 123) and 185.25.
    ids = _items("s.py::t", [1] * 247)
    assert _sizes(assign_shards(ids, 64), ids) == [62, 61, 62, 62]
    # 65 at 64: two halves, not 64 and a shard of one item that recomputes the shared prefix on its own.
    ids = _items("s.py::t", [1] * 65)
    assert _sizes(assign_shards(ids, 64), ids) == [32, 33]
    # As many items as the shard size, or fewer: one shard.
    ids = _items("s.py::t", [3, 1])
    assert _sizes(assign_shards(ids, 4), ids) == [4]


def test_an_instance_is_kept_whole_up_to_twice_the_shard_size() -> None:
    # One item, an instance of 8 (= 2 x 4), one item: 10 items, 3 shards; the targets 3.33 and 6.67 both lie
    # inside the large instance and go to its edges.
    ids = _items("s.py::t", [1, 8, 1])
    assert _sizes(assign_shards(ids, 4), ids) == [1, 8, 1]


def test_a_larger_instance_is_cut_at_multiples_of_the_shard_size() -> None:
    # An instance of 20 alone, size 4: it may be cut 4, 8, 12 and 16 items in; the 5 targets are exactly there.
    ids = _items("s.py::t", [20])
    assert _sizes(assign_shards(ids, 4), ids) == [4, 4, 4, 4, 4]
    # One item, an instance of 9 (> 8), one item: allowed starts 0, 1, 5, 9, 10 (the cuts are counted from the
    # instance's start, 1). Targets 11/3 = 3.67 -> 5 and 22/3 = 7.33 -> 9.
    ids = _items("s.py::t", [1, 9, 1])
    assert _sizes(assign_shards(ids, 4), ids) == [5, 4, 2]


def test_interleaved_functions_keep_their_own_groups_and_counters() -> None:
    left, right = _items("a.py::t", [2, 3, 1, 2, 3, 1]), _items("a.py::u", [1] * 5)
    mixed = [nodeid for pair in zip(left, right) for nodeid in pair] + left[len(right) :]
    shards = assign_shards(mixed, 4)
    # Each function is cut as if it were alone: the other's items between its own neither split an instance
    # nor advance its shard numbers.
    assert {n: shards[n] for n in left} == assign_shards(left, 4)
    assert {n: shards[n] for n in right} == assign_shards(right, 4)
    assert _sizes(shards, left) == [5, 3, 4]
    assert _sizes(shards, right) == [2, 3]  # 5 at 4: the boundary at 2.5, a tie, goes to the earlier


def test_an_instance_is_its_consecutive_items_only() -> None:
    # The same instance id again later (a shuffled order) is a new group: only neighbours are kept together.
    ids = ["s.py::t[a]", "s.py::t[a~x]", "s.py::t[b]", "s.py::t[a~y]", "s.py::t[c]", "s.py::t[c~x]"]
    assert _sizes(assign_shards(ids, 2), ids) == [2, 2, 2]


def test_the_same_collection_gives_the_same_shards() -> None:
    ids = _items("a.py::t", [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]) + _items("b.py::u", [2, 7, 1, 8, 2, 8])
    first = assign_shards(ids, 5)
    assert assign_shards(list(ids), 5) == first
    assert list(first) == ids  # every parametrized item, in collection order


def test_a_hundred_thousand_items() -> None:
    # A large collection with one instance far beyond the bound: everything is assigned, every shard is bounded.
    ids = _items("s.py::t", [4] * 20_000 + [20_000])
    shards = assign_shards(ids, 64)
    sizes = _sizes(shards, ids)
    assert sum(sizes) == 100_000 and max(sizes) <= 128
    assert len(sizes) <= -(-100_000 // 64)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=60), st.integers(1, 12))
def test_cutting_rule_invariants(groups: list[int], size: int) -> None:
    ids = _items("s.py::t", groups)
    sizes = _sizes(assign_shards(ids, size), ids)
    n = len(ids)
    assert sum(sizes) == n
    assert len(sizes) <= -(-n // size)  # never more shards than the plain rule
    assert max(sizes) <= 2 * size  # the memory bound
    # Every shard starts at an instance boundary, or inside an instance longer than 2 x size at a multiple of size.
    allowed, position = set(), 0
    for group in groups:
        allowed.add(position)
        if group > 2 * size:
            allowed.update(range(position + size, position + group, size))
        position += group
    starts = [sum(sizes[:k]) for k in range(len(sizes))]
    assert set(starts) <= allowed
