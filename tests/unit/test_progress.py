"""Progress lines: when they appear (throttled, quiet for short streams), and what they say (rate, time left as a
range); the heartbeat during one long batch or load, driven by a fake clock through ``tick`` (no thread but one)."""

from __future__ import annotations

import re

import pytest

from pytest_holistic.progress import ItemProgress, ModelProgress
from pytest_holistic.progress.estimate import TimeLeft, duration, span


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_short_stream_says_nothing_and_a_long_one_says_rate_and_time_left() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = ModelProgress(lines.append, tty=True, clock=clock, tty_every=10.0, quiet_for=3.0)
    progress.started("generation", 100)
    clock.now += 2.0
    progress.advanced(20)  # 2 s in: still quiet
    assert lines == []
    clock.now += 2.0
    progress.advanced(20)  # 40 requests in 4 s, two batches at the same pace: 10/s, 60 left -> 6 s
    assert lines == ["pytest-holistic: generation 40/100 requests, 10.0 requests/s, about 6 s left in this shard"]
    clock.now += 5.0
    progress.advanced(10)  # 5 s after the last line: throttled on a terminal (every 10 s)
    assert len(lines) == 1
    clock.now += 5.0
    # 60 in 14 s; batches of 0.1 s a request (40 requests) and 0.5 s (20): weighed by their requests, 0.23 s a
    # request give or take 0.22, kept within the fastest batch's pace: the 40 left take 4 to 18.04 s, rounded outwards
    progress.advanced(10)
    assert lines[-1] == "pytest-holistic: generation 60/100 requests, 4.3 requests/s, about 4-19 s left in this shard"
    clock.now += 20.0
    progress.advanced(40)  # done: the last batch needs no estimate
    assert len(lines) == 2


def test_a_log_file_gets_fewer_lines_than_a_terminal() -> None:
    clock = Clock()
    counts = {}
    for tty in (True, False):
        lines: list[str] = []
        progress = ModelProgress(lines.append, tty=tty, clock=clock, tty_every=10.0, log_every=30.0, quiet_for=0.0)
        progress.started("scoring", 10_000)
        for _ in range(120):
            clock.now += 1.0
            progress.advanced(10)
        counts[tty] = len(lines)
    assert counts == {True: 12, False: 4}


def test_loading_lines_name_the_model_and_where_it_runs() -> None:
    lines: list[str] = []
    progress = ModelProgress(lines.append, tty=False)
    progress.loading("gpt2-large")
    progress.loaded("gpt2-large", 12.345, {"device": "cuda:0", "dtype": "bfloat16", "other": 1})
    progress.loading("")
    assert lines == [
        "pytest-holistic: loading model gpt2-large ...",
        "pytest-holistic: model gpt2-large loaded in 12.3 s (cuda:0, bfloat16)",
        "pytest-holistic: loading the model ...",
    ]


def test_item_progress_measures_from_the_first_finished_item() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = ItemProgress(lines.append, tty=False, clock=clock, log_every=30.0, quiet_for=5.0)
    ids = [f"t{k}" for k in range(1000)]
    progress.expect(ids)
    clock.now += 600.0  # workers start and load the model: not part of the rate
    progress.finished(ids[0])
    for nodeid in ids[1:701]:
        clock.now += 0.1
        progress.finished(nodeid)  # 10 items/s after the first, one window a line
    assert lines == [
        "pytest-holistic: 51/1000 items, 10.0 items/s, time left unknown",
        "pytest-holistic: 351/1000 items, 10.0 items/s, about 65 s left",
        "pytest-holistic: 651/1000 items, 10.0 items/s, about 35 s left",
    ]


def test_item_progress_gives_a_range_when_shards_finish_unevenly() -> None:
    """Items arrive a shard at a time; a slower shard later widens the range instead of being ignored."""
    lines: list[str] = []
    clock = Clock()
    progress = ItemProgress(lines.append, tty=False, clock=clock, log_every=30.0, quiet_for=5.0)
    ids = iter([f"t{k}" for k in range(400)])
    progress.expect([f"t{k}" for k in range(400)])
    for wait in (0.0, 40.0, 40.0, 120.0):  # shards of 50 items, the last one three times slower
        clock.now += wait
        for _ in range(50):
            progress.finished(next(ids))
    assert lines[:2] == [  # a line at the first item of each shard after the first
        "pytest-holistic: 51/400 items, 1.2 items/s, time left unknown",
        "pytest-holistic: 101/400 items, 1.2 items/s, about 4 min left",
    ]
    assert lines[2] == "pytest-holistic: 151/400 items, 0.8 items/s, about 3-10 min left"  # 0.8 to 2.4 s an item


@pytest.mark.parametrize(("seconds", "text"), [(59.4, "59 s"), (125, "2 min 05 s"), (7300, "2 h 01 min")])
def test_durations_read_naturally(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_streams_open_at_once_are_one_count() -> None:
    """A served model's shards computed side by side: a stream started while another is open adds to its total."""
    lines: list[str] = []
    clock = Clock()
    progress = ModelProgress(lines.append, tty=False, clock=clock, quiet_for=0.0, log_every=1.0)
    progress.started("generation", 10)
    progress.started("generation", 30)
    clock.now += 2.0
    progress.advanced(4)
    clock.now += 2.0
    progress.advanced(4)
    assert lines[-1] == "pytest-holistic: generation 8/40 requests, 2.0 requests/s, about 16 s left in this shard"
    progress.finished()
    progress.finished()
    progress.started("scoring", 5)  # all closed: a new count
    clock.now += 2.0
    progress.advanced(1)
    assert lines[-1].startswith("pytest-holistic: scoring 1/5 requests")


def test_the_time_left_is_unknown_before_two_batches_and_widens_with_their_spread() -> None:
    left = TimeLeft()
    assert left.text(100) == "time left unknown"
    left.add(10, 10.0)
    assert left.text(100) == "time left unknown"  # one batch says nothing about the next
    left.add(10, 10.0)
    assert left.text(100) == "about 2 min left"  # 100 s
    widths = []
    for slow in (12.0, 20.0, 40.0):
        uneven = TimeLeft()
        for seconds in (10.0, slow, 10.0, slow):
            uneven.add(10, seconds)
        low, high = uneven.bounds(100) or (0.0, 0.0)
        assert low <= 100.0 <= high
        widths.append(high - low)
    assert widths == sorted(widths) and widths[0] < widths[-1]


def test_longer_batches_still_to_come_lengthen_the_time_left() -> None:
    """Measured per unit of work (characters), not per request: the short batches done first promise nothing."""
    lines: list[str] = []
    clock = Clock()
    progress = ModelProgress(lines.append, tty=False, clock=clock, quiet_for=0.0, log_every=1.0)
    progress.started("scoring", 40, work=10 * 100 * 2 + 10 * 1000 * 2)  # 20 short requests, then 20 ten times longer
    for _ in range(2):
        clock.now += 10.0
        progress.advanced(10, work=10 * 100)
    assert lines[-1] == "pytest-holistic: scoring 20/40 requests, 1.0 requests/s, about 3 min left in this shard"  # 200 s, not 20 s


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [
        (20, 40, "about 20-40 s"),
        (30, 200, "under 4 min"),
        (120, 240, "about 2-4 min"),
        (7000, 11000, "about 1-4 h"),
        (239, 241, "about 4 min"),
    ],
)
def test_ranges_read_naturally_and_hold_both_ends(low: float, high: float, text: str) -> None:
    assert span(low, high) == text


def _fast_then_slow(seconds_before: dict[str, float] | None) -> list[str]:
    """100 items of 0.1 s, then 20 of 10 s, on two workers and a machine 1.5 times slower than the last run's."""
    lines: list[str] = []
    clock = Clock()
    progress = ItemProgress(lines.append, tty=False, clock=clock, log_every=2.0, quiet_for=0.0)
    fast, slow = [f"unit::t{k}" for k in range(100)], [f"e2e::t{k}" for k in range(20)]
    progress.expect(fast + slow, seconds_before)
    for nodeid in fast:
        clock.now += 0.1 * 1.5 / 2
        progress.finished(nodeid)
    for nodeid in slow:
        clock.now += 10.0 * 1.5 / 2
        progress.finished(nodeid)
    return lines


def _said_range(line: str) -> tuple[float, float]:
    """The seconds a line's "about 2-3 min left" (or "about 3 min", "under 4 s") allows, its rounding included."""
    found = re.search(r"(about|under) (\d+)(?:-(\d+))? (s|min|h) left$", line)
    assert found is not None, line
    size = {"s": 1, "min": 60, "h": 3600}[found[4]]
    low, high = int(found[2]), int(found[3] or found[2])
    if found[1] == "under":
        return 0.0, high * size
    return (low - 0.5) * size, (high + 0.5) * size


def test_the_last_runs_item_seconds_make_slow_items_still_to_come_count() -> None:
    """Fast unit tests first, slow end-to-end tests last: items per second so far promises seconds, the last run's
    item seconds say what the slow ones cost, and this run's pace (slower machine, two workers) scales them."""
    before = {f"unit::t{k}": 0.1 for k in range(100)} | {f"e2e::t{k}": 10.0 for k in range(20)}
    timed, untimed = _fast_then_slow(before), _fast_then_slow(None)
    for done in (29, 56, 83):  # lines while the fast items finish; truly left: their rest, then 20 of 7.5 s
        truth = (100 - done) * 0.075 + 20 * 7.5
        [with_seconds] = [line for line in timed if f" {done}/120 items" in line]
        low, high = _said_range(with_seconds)
        assert low <= truth <= high, (with_seconds, truth)
        [flat] = [line for line in untimed if f" {done}/120 items" in line]
        assert _said_range(flat)[1] < truth / 10, (flat, truth)  # the flat count promised seconds


def test_an_item_never_timed_counts_as_the_mean_of_those_that_were() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = ItemProgress(lines.append, tty=False, clock=clock, log_every=1.0, quiet_for=0.0)
    progress.expect(["a", "b", "c", "new1", "new2"], {"a": 2.0, "b": 2.0, "c": 2.0, "gone": 500.0})
    for nodeid in ("a", "b", "c"):
        clock.now += 2.0
        progress.finished(nodeid)
    assert lines[-1] == "pytest-holistic: 3/5 items, 0.5 items/s, about 4 s left"  # two more of 2 s each
