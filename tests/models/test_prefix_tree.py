"""The prefix plan over token sequences: every shared span is a node computed once, and each sequence's nodes
spell exactly the prefix it was cut at; checked against brute force over the sequences themselves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.models.prefix_tree import PrefixPlan, plan_prefixes, unique_tokens, without_short_spans


def _spelled(plan: PrefixPlan, node: int | None) -> tuple[int, ...]:
    if node is None:
        return ()
    return tuple(token for step in plan.path(node) for token in plan.nodes[step].tokens)


def _best_shared(sequences: list[tuple[int, ...]], i: int) -> int:
    """Brute force: the longest prefix sequence i shares with any other sequence."""
    best = 0
    for j, other in enumerate(sequences):
        if j != i:
            length = 0
            while length < min(len(other), len(sequences[i])) and other[length] == sequences[i][length]:
                length += 1
            best = max(best, length)
    return best


def _check(sequences: list[tuple[int, ...]], limits: list[int], min_shared: int) -> PrefixPlan:
    plan = plan_prefixes(sequences, limits, min_shared)
    for i, sequence in enumerate(sequences):
        expected = min(_best_shared(sequences, i), limits[i])
        assert plan.cut[i] == (expected if expected >= min_shared else 0)
        assert _spelled(plan, plan.node_of[i]) == sequence[: plan.cut[i]]
        assert plan.node_of[i] is None or plan.nodes[plan.node_of[i]].depth == plan.cut[i]
    # Each node is a distinct prefix (no span computed twice), and its parent comes first (waves are valid).
    spelled = [_spelled(plan, n) for n in range(len(plan.nodes))]
    assert len(set(spelled)) == len(spelled)
    for index, node in enumerate(plan.nodes):
        assert node.tokens and (node.parent is None or node.parent < index)
        assert node.start == (0 if node.parent is None else plan.nodes[node.parent].depth)
    done: set[int] = set()
    for wave in plan.waves():
        assert all(plan.nodes[n].parent is None or plan.nodes[n].parent in done for n in wave)
        done.update(wave)
    assert done == set(range(len(plan.nodes)))
    # The nodes hold exactly the distinct tokens of the cut prefixes: what a trie over them would hold.
    assert plan.shared_tokens == len({sequence[:end] for sequence, cut in zip(sequences, plan.cut) for end in range(1, cut + 1)})
    return plan


def test_a_few_shot_prefix_and_an_instance_with_variants_are_nested_nodes() -> None:
    shots = tuple(range(100, 140))  # 40 tokens of instructions and examples, shared by all
    passage = tuple(range(200, 220))  # one instance's passage, shared by its variants
    sequences = [
        shots + passage + (1, 2, 3),  # the instance
        shots + passage + (1, 9, 9),  # a variant that changes a late word
        shots + passage[:5] + (7,) * 20,  # a variant that changes an early word
        shots + tuple(range(300, 330)),  # another instance
        (5, 6, 7),  # a 0-shot prompt that shares nothing
    ]
    plan = _check(sequences, [len(s) - 1 for s in sequences], min_shared=16)
    assert plan.cut == (61, 61, 45, 40, 0)
    # The shots; the passage's first 5 tokens; its other 15 and the first answer token the two variants share.
    assert [len(node.tokens) for node in plan.nodes] == [40, 5, 16]
    assert plan.node_of[4] is None and plan.waves() == [[0], [1], [2]]


def test_limits_keep_the_tokens_whose_outputs_are_wanted_out_of_the_shared_part() -> None:
    context = tuple(range(50))
    sequences = [context + (60,), context + (61,), context + (62, 63)]  # three continuations of one context
    plan = _check(sequences, [49, 49, 49], min_shared=16)
    assert plan.cut == (49, 49, 49) and len(plan.nodes) == 1


def test_shared_prefixes_under_the_minimum_are_not_worth_a_node() -> None:
    plan = _check([(1, 2, 3, 4, 9), (1, 2, 3, 4, 8)], [4, 4], min_shared=5)
    assert plan.cut == (0, 0) and plan.nodes == () and plan.node_of == (None, None)


def test_unique_tokens_counts_the_distinct_prefixes() -> None:
    sequences = [(1, 2, 3), (1, 2, 4), (1, 5), (1, 2, 3), (7,)]
    assert unique_tokens(sequences) == len({s[:end] for s in sequences for end in range(1, len(s) + 1)}) == 6


_sequences = st.lists(
    st.tuples(st.integers(0, 3), st.lists(st.integers(0, 2), min_size=1, max_size=12)).map(
        lambda shared_and_tail: tuple([7] * (shared_and_tail[0] * 4)) + tuple(shared_and_tail[1])
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(sequences=_sequences, data=st.data())
def test_any_plan_spells_each_cut_prefix_from_distinct_nodes(sequences: list[tuple[int, ...]], data: st.DataObject) -> None:
    limits = [data.draw(st.integers(0, len(s))) for s in sequences]
    _check(sequences, limits, min_shared=data.draw(st.integers(1, 6)))
    assert unique_tokens(sequences) == len({s[:end] for s in sequences for end in range(1, len(s) + 1)})


@settings(max_examples=200)
@given(
    sequences=st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=24).map(tuple), min_size=1, max_size=12),
    min_span=st.integers(min_value=1, max_value=8),
)
def test_short_spans_fold_into_their_children(sequences: list[tuple[int, ...]], min_span: int) -> None:
    """Folding keeps a valid plan: every node at least ``min_span`` long, each sequence's nodes spelling its (possibly
    lowered) cut, parents first, no prefix computed twice; a cut is lowered only to a kept ancestor's depth."""
    plan = plan_prefixes(sequences, [len(s) - 1 for s in sequences], min_shared=2)
    folded = without_short_spans(plan, min_span)
    for index, node in enumerate(folded.nodes):
        assert len(node.tokens) >= min_span and (node.parent is None or node.parent < index)
        assert node.start == (0 if node.parent is None else folded.nodes[node.parent].depth)
    spelled = [_spelled(folded, n) for n in range(len(folded.nodes))]
    assert len(set(spelled)) == len(spelled)
    for i, sequence in enumerate(sequences):
        assert folded.cut[i] <= plan.cut[i]
        assert _spelled(folded, folded.node_of[i]) == sequence[: folded.cut[i]]
        if plan.node_of[i] is not None and len(plan.nodes[plan.node_of[i]].tokens) >= min_span:
            ancestors = plan.path(plan.node_of[i])
            if all(len(plan.nodes[a].tokens) >= min_span for a in ancestors):
                assert folded.cut[i] == plan.cut[i]  # nothing on its way was short: unchanged
    assert folded.shared_tokens <= sum(len(s) for s in sequences)


def test_a_short_span_between_the_shots_and_the_passages_folds_into_the_passages() -> None:
    shots = tuple(range(100, 140))
    sequences = [
        shots + (7, 8) + tuple(range(200, 230)) + (1,),
        shots + (7, 8) + tuple(range(200, 230)) + (2,),
        shots + (7, 9) + tuple(range(300, 330)) + (1,),
        shots + (7, 9) + tuple(range(300, 330)) + (2,),
    ]
    plan = plan_prefixes(sequences, [len(s) - 1 for s in sequences], min_shared=16)
    assert [len(node.tokens) for node in plan.nodes] == [41, 31, 31]  # the shots and "7", then each passage
    folded = without_short_spans(plan, 16)
    assert [len(node.tokens) for node in folded.nodes] == [41, 31, 31] and folded.cut == plan.cut
    plan = plan_prefixes(sequences, [len(s) - 1 for s in sequences], min_shared=16)
    tiny = without_short_spans(plan, 32)  # the passages' spans are too short now: each sequence runs from the shots
    assert [len(node.tokens) for node in tiny.nodes] == [41] and tiny.cut == (41, 41, 41, 41)
