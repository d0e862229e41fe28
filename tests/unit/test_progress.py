"""Progress lines: when they appear (throttled, quiet for short streams), and what they say (rate, time left)."""

from __future__ import annotations

import pytest

from pytest_holistic.progress import ItemProgress, ModelProgress


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
    progress.advanced(20)  # 40 requests in 4 s: 10/s, 60 left -> 6 s
    assert lines == ["pytest-holistic: generation 40/100 requests, 10.0 requests/s, about 6 s left"]
    clock.now += 5.0
    progress.advanced(10)  # 5 s after the last line: throttled on a terminal (every 10 s)
    assert len(lines) == 1
    clock.now += 5.0
    progress.advanced(10)  # 60 in 14 s
    assert lines[-1] == "pytest-holistic: generation 60/100 requests, 4.3 requests/s, about 9 s left"
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
    progress.expect(1000)
    clock.now += 600.0  # workers start and load the model: not part of the rate
    progress.finished()
    for _ in range(100):
        clock.now += 0.1
        progress.finished()  # 100 items in 10 s after the first
    assert lines == ["pytest-holistic: 51/1000 items, 10.0 items/s, about 1 min 35 s left"]


@pytest.mark.parametrize(("seconds", "text"), [(59.4, "59 s"), (125, "2 min 05 s"), (7300, "2 h 01 min")])
def test_durations_read_naturally(seconds: float, text: str) -> None:
    lines: list[str] = []
    clock = Clock()
    progress = ModelProgress(lines.append, tty=False, clock=clock, quiet_for=0.0)
    progress.started("generation", 2)
    clock.now += seconds
    progress.advanced(1)  # one of two in `seconds`: as long again to go
    assert lines[-1].endswith(f"about {text} left")


def test_streams_open_at_once_are_one_count() -> None:
    """A served model's shards computed side by side: a stream started while another is open adds to its total."""
    lines: list[str] = []
    clock = Clock()
    progress = ModelProgress(lines.append, tty=False, clock=clock, quiet_for=0.0, log_every=1.0)
    progress.started("generation", 10)
    progress.started("generation", 30)
    clock.now += 2.0
    progress.advanced(8)
    assert lines == ["pytest-holistic: generation 8/40 requests, 4.0 requests/s, about 8 s left"]
    progress.finished()
    progress.finished()
    progress.started("scoring", 5)  # all closed: a new count
    clock.now += 2.0
    progress.advanced(1)
    assert lines[-1].startswith("pytest-holistic: scoring 1/5 requests")
