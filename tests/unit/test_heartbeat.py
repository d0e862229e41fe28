"""The heartbeat: a line while one batch (or the load) runs long, none for short ones, none after the end or a cancel.

Driven by a fake clock through ``tick``, the call the heartbeat's thread makes; one test runs the real thread for a
fraction of a second.
"""

from __future__ import annotations

import threading
import time

from pytest_holistic.models import BuiltModel
from pytest_holistic.models.base import GenerationRequest
from pytest_holistic.models.cached import CachedModel
from pytest_holistic.models.scripted import ScriptedModel
from pytest_holistic.progress import ModelProgress
from pytest_holistic.progress.heartbeat import Heartbeat


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _progress(lines: list[str], clock: Clock, tty: bool = True) -> ModelProgress:
    return ModelProgress(lines.append, tty=tty, clock=clock, tty_every=10.0, log_every=30.0, quiet_for=3.0, threaded=False)


def test_a_long_batch_says_it_is_still_computing_every_interval() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = _progress(lines, clock)
    progress.started("generation", 768)
    clock.now += 5.0
    progress.advanced(64)  # the first batch: a rate line, no estimate yet
    assert lines == ["pytest-holistic: generation 64/768 requests, 12.8 requests/s, time left unknown in this shard"]
    progress.computing()
    clock.now += 9.0
    assert progress.heartbeat.tick() == 1.0  # not yet: the next check is when the interval is up
    clock.now += 91.0
    progress.heartbeat.tick()
    clock.now += 4.0
    progress.heartbeat.tick()  # 4 s after the last line: throttled
    clock.now += 6.0
    progress.heartbeat.tick()
    assert lines[1:] == [
        "pytest-holistic: still computing generation batch 2 (64/768 requests done, 1 min 40 s in this batch)",
        "pytest-holistic: still computing generation batch 2 (64/768 requests done, 1 min 50 s in this batch)",
    ]
    progress.idle()
    progress.advanced(64)
    assert lines[-1].startswith("pytest-holistic: generation 128/768 requests")  # the batch's end still gets its line


def test_short_batches_get_no_heartbeat_and_the_interval_counts_from_any_line() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = _progress(lines, clock, tty=False)  # a log: every 30 s
    progress.started("scoring", 10_000)
    for _ in range(100):
        progress.computing()
        for _ in range(4):
            clock.now += 5.0
            progress.heartbeat.tick()  # 20 s batches: shorter than the interval
        progress.idle()
        progress.advanced(100)
    assert lines and not any("still computing" in line for line in lines)
    progress.computing()
    clock.now += 25.0
    progress.heartbeat.tick()  # 25 s into the batch, but the last rate line came 25 s ago too (every 30 s)
    assert not any("still computing" in line for line in lines)
    clock.now += 5.0
    progress.heartbeat.tick()
    assert lines[-1].startswith("pytest-holistic: still computing scoring batch 101 (10000/10000")


def test_no_line_after_the_batch_ends_or_the_session_is_cancelled() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = _progress(lines, clock)
    progress.started("generation", 10)
    progress.computing()
    clock.now += 5.0
    progress.idle()
    clock.now += 60.0
    assert progress.heartbeat.tick() is None  # no step under way: the thread sleeps until the next one
    progress.computing()
    progress.close()  # cancelled in the middle of a batch
    clock.now += 60.0
    assert progress.heartbeat.tick() is None
    progress.computing()  # a stream still finishing after the cancel says nothing either
    clock.now += 60.0
    assert progress.heartbeat.tick() is None
    assert lines == []


def test_the_load_gets_a_heartbeat_until_it_ends() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = _progress(lines, clock)
    progress.loading("gpt2-large")
    clock.now += 12.0
    progress.heartbeat.tick()
    progress.loaded("gpt2-large", 12.0, {})
    clock.now += 60.0
    progress.heartbeat.tick()
    assert lines == [
        "pytest-holistic: loading model gpt2-large ...",
        "pytest-holistic: still loading model gpt2-large (12 s so far)",
        "pytest-holistic: model gpt2-large loaded in 12.0 s",
    ]


def test_a_step_on_another_thread_gets_no_heartbeat() -> None:
    """A shard computed ahead runs while pytest writes on its own thread: only pytest's thread's steps are spoken of."""
    lines: list[str] = []
    clock = Clock()
    progress = _progress(lines, clock)
    progress.started("generation", 10)
    elsewhere = threading.Thread(target=progress.computing)
    elsewhere.start()
    elsewhere.join()
    clock.now += 60.0
    assert progress.heartbeat.tick() is None


def test_a_terminal_that_fails_ends_the_heartbeat_not_the_run() -> None:
    def broken(line: str) -> None:
        raise OSError("closed")

    clock = Clock()
    heartbeat = Heartbeat(broken, every=1.0, clock=clock, threaded=False)
    heartbeat.start(lambda seconds: "line")
    clock.now += 2.0
    assert heartbeat.tick() is None


def test_the_cached_model_brackets_each_batch_so_a_slow_one_is_heard() -> None:
    """The heartbeat fires inside the backend's batch (as its thread would); the cancel closes it for good."""
    lines: list[str] = []
    clock = Clock()
    progress = _progress(lines, clock)

    def slow(prompt: str) -> str:  # the forward pass: 15 s, with the heartbeat's thread waking during it
        clock.now += 15.0
        progress.heartbeat.tick()
        return " yes"

    model = CachedModel(lambda: BuiltModel(ScriptedModel(generate=slow, batch_size=1)), None)
    model.progress = progress
    model.generate([GenerationRequest("one"), GenerationRequest("two")])
    assert [line for line in lines if "still" in line] == [
        "pytest-holistic: still computing generation batch 1 (0/2 requests done, 15 s in this batch)",
        "pytest-holistic: still computing generation batch 2 (1/2 requests done, 15 s in this batch)",
    ]
    model.cancel()
    clock.now += 60.0
    assert progress.heartbeat.tick() is None


def test_the_thread_speaks_during_a_step_and_stops_at_its_end() -> None:
    """The real thread, for a fraction of a second: lines while the step lasts, none after, and it ends at close."""
    lines: list[str] = []
    progress = ModelProgress(lines.append, tty=True, tty_every=0.02, quiet_for=0.0)
    before = threading.active_count()
    for _ in range(50):  # short steps: one thread for them all, not one each
        progress.computing()
        progress.idle()
    assert threading.active_count() <= before + 1
    progress.computing()
    deadline = time.monotonic() + 5.0
    while not lines and time.monotonic() < deadline:
        time.sleep(0.01)
    progress.idle()
    heard = len(lines)
    time.sleep(0.1)
    assert heard >= 1 and len(lines) == heard
    assert lines[0].startswith("pytest-holistic: still computing")
    progress.close()
    assert threading.active_count() == before
