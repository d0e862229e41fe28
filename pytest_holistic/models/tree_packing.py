"""Log-likelihood requests laid out as token trees in packed rows: each shared prefix computed once, in one pass.

A request is the tokens the model is fed (its context and its continuation but the last token) and the columns
whose outputs predict its continuation. Sorted, neighbouring sequences share the longest prefixes; laid out in that
order, a sequence adds to its row only the tokens after its common prefix with the one before it. The row is then
the pre-order walk of a token trie: every token's position id is its depth (its index in each sequence through
it), and it may attend to its ancestors and itself only. In pre-order the descendants of a column are the columns
up to the end of its subtree, so the attention mask is two comparisons per pair of columns (``key <= query < end[key]``)
and is built on the device from one end index per column. A sequence in a row thus sees exactly its own prefix, as
if run alone, and unrelated sequences share a row as blocks of a block-diagonal mask with no padding between them.

This is prefix sharing without a key/value cache: no cache is expanded per row or spliced, so it costs what
the tokens cost (the cascade / shared-prefix attention idea, with a dense mask). Grouping decides what may merge:
requests of one group share prefixes; requests of different groups never merge (sharing off: a group per context,
so a context is still computed once for all its continuations). Everything is decided from token ids alone, the
same on any device or batch size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .prefix_tree import common_prefix

ROW_TOKENS = 1024
"""The least row width packing aims for (a row is at least twice the longest sequence, so a prefix has room for
several suffixes). Attention over a dense mask grows with the width squared; at 1024 columns it is a few percent of
a 1B-parameter model's work per token. Not yet measured on a GPU."""


@dataclass(frozen=True)
class TreeRequest:
    """One request: ``fed`` the tokens fed, ``first`` the index in ``fed`` of the token that predicts the first scored
    one (the context's last), ``targets`` the continuation's tokens (predicted by ``fed[first:]``), ``group`` what it
    may share prefixes with."""

    fed: tuple[int, ...]
    first: int
    targets: tuple[int, ...]
    group: tuple[int, ...] = ()


@dataclass(frozen=True)
class PackedRow:
    """One row: its tokens in pre-order, each one's position id (depth) and subtree end (exclusive), and per member
    request (an index into the requests packed) the columns that predict its targets."""

    tokens: tuple[int, ...]
    depth: tuple[int, ...]
    end: tuple[int, ...]
    members: tuple[int, ...]
    scored: tuple[tuple[int, ...], ...]

    @property
    def width(self) -> int:
        return len(self.tokens)


def row_cap(requests: Sequence[TreeRequest]) -> int:
    """How wide a row may grow: :data:`ROW_TOKENS`, or twice the longest sequence when that is more (every request fits)."""
    return max(ROW_TOKENS, 2 * max((len(r.fed) for r in requests), default=1))


def pack(requests: Sequence[TreeRequest], cap: int | None) -> list[PackedRow]:
    """The requests in rows of at most ``cap`` tokens (a longer request gets a row of its own), sorted so that
    each request continues the trie of the one before it in its row; ``cap=None``: one row per group."""
    order = sorted(range(len(requests)), key=lambda i: (requests[i].group, requests[i].fed, i))
    rows: list[PackedRow] = []
    builder = _RowBuilder()
    previous: TreeRequest | None = None
    for index in order:
        request = requests[index]
        shared = 0
        if previous is not None and previous.group == request.group and builder.members:
            shared = common_prefix(previous.fed, request.fed)
        if builder.members and (
            (previous is not None and previous.group != request.group)
            if cap is None
            else builder.width + len(request.fed) - shared > cap
        ):
            rows.append(builder.build())
            builder, shared = _RowBuilder(), 0
        builder.add(index, request, shared)
        previous = request
    if builder.members:
        rows.append(builder.build())
    return rows


def padded_rows(rows: Sequence[PackedRow], pad_id: int) -> tuple[list[list[int]], list[list[int]], list[list[int]]]:
    """(tokens, position ids, subtree ends) of ``rows`` right-padded to the widest: a padding column holds
    ``pad_id`` at position 0 and ends right after itself, so it sees itself only (a softmax row is never empty)."""
    width = max(row.width for row in rows)
    tokens = [[*row.tokens, *[pad_id] * (width - row.width)] for row in rows]
    depth = [[*row.depth, *[0] * (width - row.width)] for row in rows]
    end = [[*row.end, *range(row.width + 1, width + 1)] for row in rows]
    return tokens, depth, end


def fed_tokens(rows: Sequence[PackedRow]) -> int:
    """Tokens the rows hold (no padding): what a packed layout computes."""
    return sum(row.width for row in rows)


class _RowBuilder:
    """One row being laid out: the trie path of the last request added, and every column so far."""

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.depth: list[int] = []
        self.path: list[int] = []  # the columns of the last request's sequence
        self.members: list[int] = []
        self.scored: list[tuple[int, ...]] = []

    @property
    def width(self) -> int:
        return len(self.tokens)

    def add(self, index: int, request: TreeRequest, shared: int) -> None:
        del self.path[shared:]
        for position in range(shared, len(request.fed)):
            self.path.append(len(self.tokens))
            self.tokens.append(request.fed[position])
            self.depth.append(position)
        self.members.append(index)
        self.scored.append(tuple(self.path[request.first : request.first + len(request.targets)]))

    def build(self) -> PackedRow:
        return PackedRow(
            tuple(self.tokens), tuple(self.depth), tuple(subtree_ends(self.depth)), tuple(self.members), tuple(self.scored)
        )


def subtree_ends(depth: Sequence[int]) -> list[int]:
    """Per column of a pre-order walk, the first later column not below it (its subtree's end, exclusive)."""
    ends = [len(depth)] * len(depth)
    open_columns: list[int] = []
    for column, level in enumerate(depth):
        while open_columns and depth[open_columns[-1]] >= level:
            ends[open_columns.pop()] = column
        open_columns.append(column)
    return ends
