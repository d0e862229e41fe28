"""Each item's seconds in the last run that ran it, kept in pytest's cache (``.pytest_cache``).

The items of a suite are far from equal: a run's first minutes often go to fast unit tests, and the slow
end-to-end ones come last, so items per second so far promises too much. With the seconds each item took last
time, the time left is weighed by what the items still to run cost then, and the pace of this run (another
machine, a warm response cache, more workers) is measured in the same unit. Without pytest's cache
(``-p no:cacheprovider``) or on a first run, every item counts the same.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Protocol

CACHE_KEY = "holistic/item-seconds"
"""Where the seconds are kept in pytest's cache: node id -> seconds, setup, call and teardown together."""

KEPT = 100_000
"""At most this many items are kept: every item of the latest run, then the newest of the runs before it."""


class _Cache(Protocol):
    def get(self, key: str, default: object) -> object: ...

    def set(self, key: str, value: object) -> None: ...


def _cache(config: object) -> _Cache | None:
    return getattr(config, "cache", None)


def read_item_seconds(config: object) -> dict[str, float]:
    """The seconds stored by earlier runs; anything unreadable (a hand-edited or foreign cache entry) is ignored."""
    cache = _cache(config)
    stored = cache.get(CACHE_KEY, {}) if cache is not None else {}
    if not isinstance(stored, dict):
        return {}
    return {
        str(nodeid): float(seconds)
        for nodeid, seconds in stored.items()
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and math.isfinite(seconds) and seconds >= 0
    }


class ItemSeconds:
    """A plugin on the process that receives every item's reports (the controller under xdist): it adds up each
    item's phases, and at the session's end keeps them, over the seconds the earlier runs stored."""

    def __init__(self, config: object) -> None:
        self._config = config
        self.seen: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: object) -> None:
        nodeid, seconds = getattr(report, "nodeid", None), getattr(report, "duration", None)
        if isinstance(nodeid, str) and isinstance(seconds, int | float) and math.isfinite(seconds) and seconds >= 0:
            self.seen[nodeid] = self.seen.get(nodeid, 0.0) + float(seconds)

    def pytest_sessionfinish(self) -> None:
        cache = _cache(self._config)
        if cache is None or not self.seen:
            return
        kept = merged(read_item_seconds(self._config), self.seen)
        try:
            cache.set(CACHE_KEY, {nodeid: round(seconds, 4) for nodeid, seconds in kept.items()})
        except OSError:  # an unwritable .pytest_cache costs the next run's estimate, never this run
            pass


def merged(before: Mapping[str, float], latest: Mapping[str, float]) -> dict[str, float]:
    """The latest run's seconds over the earlier ones, kept oldest first; past :data:`KEPT` items the oldest go."""
    kept = {nodeid: seconds for nodeid, seconds in before.items() if nodeid not in latest}
    kept.update(latest)
    return dict(list(kept.items())[-KEPT:])
