"""Which items are computed together: the shards of each parametrized test function.

A shard is a contiguous run of one test function's items, batched together and sent to one xdist worker.
An instance and its perturbed variants (``boolq-001``, ``boolq-001~typos``, ...) come one after another and
their prompts share the few-shot prefix and the start of the instance's text, so a shard boundary is moved to
the nearest instance boundary: the model then shares that prefix inside one shard instead of computing it in
two. Every shard also computes the run's common prefix once, so a function's items are cut into as few
shards as the shard size allows, of balanced size (not 64, 64, 64, 55).

The cut depends only on the ordered node ids and the shard size, so the xdist controller (which has only
node ids) and every worker agree on it without talking to each other.
"""

from __future__ import annotations

from collections.abc import Sequence


def shard_base(nodeid: str) -> str | None:
    """The test function a parametrized node id belongs to (``a.py::test_x[id]`` -> ``a.py::test_x``)."""
    last = nodeid.rfind("::")
    bracket = nodeid.find("[", last + 2 if last >= 0 else 0)
    return nodeid[:bracket] if bracket > 0 and nodeid.endswith("]") else None


def instance_key(nodeid: str, base: str) -> str:
    """The instance an item asks about: its parameter id up to the first ``~`` (``boolq-001~typos`` -> ``boolq-001``)."""
    return nodeid[len(base) + 1 : -1].partition("~")[0]


def _allowed_starts(keys: Sequence[str], shard_size: int) -> list[int]:
    """Where a shard may start: every instance boundary, and every ``shard_size``-th item inside an instance
    longer than twice the shard size (kept whole up to that, cut beyond it to bound a shard's memory).

    Ascending; the last entry is ``len(keys)``.
    """
    allowed = [0]
    start = 0
    for position in range(1, len(keys) + 1):
        if position == len(keys) or keys[position] != keys[start]:
            if position - start > 2 * shard_size:
                allowed.extend(range(start + shard_size, position, shard_size))
            allowed.append(position)
            start = position
    return allowed


def shard_starts(keys: Sequence[str], shard_size: int) -> list[int]:
    """The first position of each shard of one function's items, given each item's instance key in order.

    ``k = ceil(n / shard_size)`` shards are aimed for: the j-th boundary goes to the allowed start nearest
    to ``j * n / k`` (the earlier one on a tie), and boundaries that land on the same place merge. No shard
    exceeds ``2 * shard_size``: a longer one would contain an allowed start nearer to some target than its
    own ends are. Linear in the number of items.
    """
    n = len(keys)
    size = max(1, shard_size)
    parts = -(-n // size)
    allowed = _allowed_starts(keys, size)
    starts = [0]
    below = 0  # index in ``allowed`` of the last start at or before the current target
    for j in range(1, parts):
        target = j * n  # the target is j * n / parts; positions are compared multiplied by ``parts``
        while allowed[below + 1] * parts <= target:
            below += 1
        before, after = allowed[below], allowed[below + 1]
        chosen = before if target - before * parts <= after * parts - target else after
        if starts[-1] < chosen < n:
            starts.append(chosen)
    return starts


def assign_shards(nodeids: Sequence[str], shard_size: int) -> dict[str, str]:
    """Shard name (``base#shardK``) of every parametrized node id, from the ordered collection alone.

    Each test function counts its own items, even when several functions' items are interleaved.
    """
    members: dict[str, list[str]] = {}
    for nodeid in nodeids:
        base = shard_base(nodeid)
        if base is not None:
            members.setdefault(base, []).append(nodeid)
    shards: dict[str, str] = {}
    for base, items in members.items():
        starts = shard_starts([instance_key(nodeid, base) for nodeid in items], shard_size)
        shard = -1
        for position, nodeid in enumerate(items):
            if shard + 1 < len(starts) and starts[shard + 1] == position:
                shard += 1
            shards[nodeid] = f"{base}#shard{shard}"
    return shards
