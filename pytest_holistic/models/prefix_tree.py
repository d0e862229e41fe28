"""Which token prefixes a shard's requests share: a radix tree over their token sequences, in plain Python.

Few-shot prompts repeat the same instructions and examples in every request, and perturbed variants of one
instance repeat its text up to the first changed word. The tree finds, for each sequence, how much of it is
shared with another one (the longest common prefix with its neighbours in sorted order), cuts it there, and lays
the cut prefixes out as nodes: each node is a span of tokens that follows its parent node, so every shared token
is computed once and every sequence runs only its own suffix on top of its node. Everything here is decided from
token ids alone, so it is the same whatever device or batch size computes it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

MIN_SHARED = 16
"""Shared prefixes shorter than this are not worth a node (and a cache copy): those sequences run whole."""


@dataclass(frozen=True)
class Node:
    """A span ``tokens`` of a shared prefix, following ``parent`` (an index into the plan's nodes, or None at the root).

    ``start`` is the position of its first token in every sequence that passes through it; ``depth`` is the
    length of the whole prefix it ends (``start + len(tokens)``).
    """

    parent: int | None
    start: int
    tokens: tuple[int, ...]

    @property
    def depth(self) -> int:
        return self.start + len(self.tokens)


@dataclass(frozen=True)
class PrefixPlan:
    """The nodes to compute (parents before children) and, per sequence, its node (or None) and its cut."""

    nodes: tuple[Node, ...]
    node_of: tuple[int | None, ...]
    cut: tuple[int, ...]

    @property
    def shared_tokens(self) -> int:
        """Tokens the nodes hold: computed once each."""
        return sum(len(node.tokens) for node in self.nodes)

    def path(self, node: int) -> list[int]:
        """The nodes from the root down to ``node``, inclusive."""
        chain = []
        current: int | None = node
        while current is not None:
            chain.append(current)
            current = self.nodes[current].parent
        return chain[::-1]

    def waves(self) -> list[list[int]]:
        """Nodes grouped so that every node's parent is in an earlier group: each group is one forward pass."""
        level: list[int] = []
        for node in self.nodes:
            level.append(0 if node.parent is None else level[node.parent] + 1)
        grouped: list[list[int]] = [[] for _ in range(max(level, default=-1) + 1)]
        for index, depth in enumerate(level):
            grouped[depth].append(index)
        return grouped


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    limit = min(len(a), len(b))
    length = 0
    while length < limit and a[length] == b[length]:
        length += 1
    return length


def plan_prefixes(sequences: Sequence[Sequence[int]], limits: Sequence[int], min_shared: int = MIN_SHARED) -> PrefixPlan:
    """The shared-prefix plan of ``sequences``: sequence i is cut at most at ``limits[i]`` tokens.

    A limit keeps the tokens whose outputs are wanted out of the shared part (the last prompt token, whose
    logits give the first generated token; the last context token of a scored continuation). A sequence's cut is
    its longest common prefix with any other sequence, capped at its limit, and 0 when under ``min_shared``.
    """
    order = sorted(range(len(sequences)), key=lambda i: tuple(sequences[i]))
    shared = [0] * len(sequences)
    for before, after in itertools.pairwise(order):
        length = common_prefix(sequences[before], sequences[after])
        shared[before] = max(shared[before], length)
        shared[after] = max(shared[after], length)
    cut = [min(shared[i], max(0, limits[i])) for i in range(len(sequences))]
    cut = [length if length >= min_shared else 0 for length in cut]
    nodes, node_of = _radix([tuple(sequences[i][: cut[i]]) for i in range(len(sequences))])
    return PrefixPlan(tuple(nodes), tuple(node_of), tuple(cut))


def without_short_spans(plan: PrefixPlan, min_span: int = MIN_SHARED) -> PrefixPlan:
    """``plan`` with every node that would hold fewer than ``min_span`` tokens folded into its children.

    A radix tree puts a boundary wherever two prefixes part, so a few-shot shard's tree holds many spans of a
    handful of tokens (two variants that part one word after their instance's other variants). Each is one more
    level of forward passes for a few tokens; folded into its children, each child computes those tokens itself,
    fewer than ``min_span`` times its number of children. A sequence that ended on a folded node ends on its nearest
    kept ancestor instead (its cut lowered to that depth, or 0), and runs the rest as its own suffix.
    """
    full: list[tuple[int, ...]] = []  # each node's whole prefix
    for node in plan.nodes:
        full.append((full[node.parent] if node.parent is not None else ()) + node.tokens)

    def kept_ancestor(index: int | None) -> int | None:
        while index is not None and index not in renumbered:
            index = plan.nodes[index].parent
        return index

    renumbered: dict[int, int] = {}
    nodes: list[Node] = []
    for index, node in enumerate(plan.nodes):  # parents come first, so every ancestor is decided already
        ancestor = kept_ancestor(node.parent)
        start = plan.nodes[ancestor].depth if ancestor is not None else 0
        if node.depth - start >= min_span:
            renumbered[index] = len(nodes)
            nodes.append(Node(renumbered[ancestor] if ancestor is not None else None, start, full[index][start:]))
    ends = [kept_ancestor(node) for node in plan.node_of]
    return PrefixPlan(
        tuple(nodes),
        tuple(renumbered[end] if end is not None else None for end in ends),
        tuple(plan.nodes[end].depth if end is not None else 0 for end in ends),
    )


def _radix(prefixes: Sequence[tuple[int, ...]]) -> tuple[list[Node], list[int | None]]:
    """Nodes of a radix tree holding every non-empty prefix, and each prefix's end node.

    A node boundary lies wherever two prefixes part or one of them ends, so each prefix ends exactly on a node.
    Built from the prefixes in sorted order: the boundaries of a prefix are its common prefixes with its
    neighbours and its own end, and a node's parent is the node ending at the previous boundary.
    """
    distinct = sorted({prefix for prefix in prefixes if prefix})
    boundaries: dict[tuple[int, ...], set[int]] = {prefix: {len(prefix)} for prefix in distinct}
    for before, after in itertools.pairwise(distinct):
        length = common_prefix(before, after)
        if length:
            boundaries[before].add(length)
            boundaries[after].add(length)
    # A boundary of one prefix is a boundary of every prefix passing through that point: spread them along runs
    # of neighbours that share at least that many tokens (sorted order keeps each run contiguous).
    for index in range(1, len(distinct)):
        shared = common_prefix(distinct[index - 1], distinct[index])
        boundaries[distinct[index]].update(b for b in boundaries[distinct[index - 1]] if b <= shared)
    for index in range(len(distinct) - 2, -1, -1):
        shared = common_prefix(distinct[index], distinct[index + 1])
        boundaries[distinct[index]].update(b for b in boundaries[distinct[index + 1]] if b <= shared)
    nodes: list[Node] = []
    ids: dict[tuple[int, ...], int] = {}
    for prefix in distinct:
        parent: int | None = None
        start = 0
        for end in sorted(boundaries[prefix]):
            key = prefix[:end]
            if key not in ids:
                ids[key] = len(nodes)
                nodes.append(Node(parent, start, prefix[start:end]))
            parent, start = ids[key], end
    return nodes, [ids[prefix] if prefix else None for prefix in prefixes]


def unique_tokens(sequences: Sequence[Sequence[int]]) -> int:
    """Tokens in a prefix tree over ``sequences``: what the model must compute at the very least."""
    distinct = sorted({tuple(sequence) for sequence in sequences})
    total = sum(len(sequence) for sequence in distinct)
    return total - sum(common_prefix(a, b) for a, b in itertools.pairwise(distinct))
