"""The item seconds kept in pytest's cache for the next run's time left (``progress.durations``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pytest_holistic.progress import durations
from pytest_holistic.progress.durations import CACHE_KEY, ItemSeconds, merged, read_item_seconds


class DictCache:
    def __init__(self, stored: dict[str, Any] | None = None) -> None:
        self.stored = dict(stored or {})

    def get(self, key: str, default: object) -> object:
        return self.stored.get(key, default)

    def set(self, key: str, value: object) -> None:
        self.stored[key] = value


def _report(nodeid: str, seconds: float) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, duration=seconds)


def test_an_items_phases_are_added_and_kept_over_the_earlier_runs() -> None:
    cache = DictCache({CACHE_KEY: {"a.py::old": 3.0, "a.py::t": 9.0}})
    plugin = ItemSeconds(SimpleNamespace(cache=cache))
    for when_seconds in (0.25, 1.5, 0.25):  # setup, call, teardown
        plugin.pytest_runtest_logreport(_report("a.py::t", when_seconds))
    plugin.pytest_sessionfinish()
    assert cache.stored[CACHE_KEY] == {"a.py::old": 3.0, "a.py::t": 2.0}  # the latest run's, the others kept


def test_unreadable_entries_are_ignored_and_no_cache_is_no_error() -> None:
    garbage = {"a": "slow", "b": -1, "c": float("nan"), "d": True, "e": 2}
    assert read_item_seconds(SimpleNamespace(cache=DictCache({CACHE_KEY: garbage}))) == {"e": 2.0}
    assert read_item_seconds(SimpleNamespace(cache=DictCache({CACHE_KEY: ["a"]}))) == {}
    assert read_item_seconds(SimpleNamespace()) == {}  # -p no:cacheprovider
    plugin = ItemSeconds(SimpleNamespace())
    plugin.pytest_runtest_logreport(_report("t", 1.0))
    plugin.pytest_sessionfinish()  # nowhere to keep it: nothing happens


def test_past_the_limit_the_oldest_earlier_items_go(monkeypatch: Any) -> None:
    monkeypatch.setattr(durations, "KEPT", 4)
    before = {"old1": 1.0, "old2": 2.0, "old3": 3.0, "t": 9.0}
    assert merged(before, {"t": 1.0, "u": 1.0}) == {"old2": 2.0, "old3": 3.0, "t": 1.0, "u": 1.0}
