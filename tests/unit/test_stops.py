"""The early-stop table every process reads, and the seeded order a run that may stop early is collected in."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from pytest_holistic.models.base import ModelInfo
from pytest_holistic.records import RunHeader, RunInfo
from pytest_holistic.runspec import seeded_order
from pytest_holistic.scenarios.instance import Instance
from pytest_holistic.stops import STALE_SECONDS, Stop, StopTable


def test_a_stop_written_by_one_process_is_read_by_another(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "early-stops.sqlite"
    controller, worker = StopTable(path, "session-1"), StopTable(path, "session-1")
    assert worker.stop_of("t.py::test_x") is None
    controller.write(Stop("t.py::test_x", 16, 200, "gate `exact_match>=0.6` holds"))
    controller.write(Stop("t.py::test_x", 30, 200, "a later stop never replaces the first"))
    assert worker.stop_of("t.py::test_x") == Stop("t.py::test_x", 16, 200, "gate `exact_match>=0.6` holds")
    assert StopTable(path, "session-2").stop_of("t.py::test_x") is None  # another session sharing the cache folder


def test_a_session_removes_its_rows_and_those_left_by_killed_sessions(tmp_path: Path) -> None:
    path = tmp_path / "early-stops.sqlite"
    mine, other, old = StopTable(path, "mine"), StopTable(path, "other"), StopTable(path, "killed")
    for table in (mine, other, old):
        table.write(Stop("t.py::test_x", 1, 2, "r"))
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE stops SET written = ? WHERE session = 'killed'", (time.time() - STALE_SECONDS - 1,))
    mine.remove()
    with sqlite3.connect(path) as connection:
        assert [row[0] for row in connection.execute("SELECT session FROM stops")] == ["other"]


def test_a_table_that_cannot_be_read_stops_nothing(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert StopTable(blocked / "early-stops.sqlite", "s").stop_of("t.py::test_x") is None


def test_the_header_carries_the_order_to_the_controller() -> None:
    info = RunInfo("t.py::test_x", "x", "test", "local", {}, {"method": "generation"}, (), ("exact_match",), (), stop_early=True)
    header = RunHeader(info, ModelInfo("m", "scripted"), ("b", "a", "c"))
    back = RunHeader.from_data(json.loads(json.dumps(header.to_data())))
    assert back.order == ("b", "a", "c") and back.run.stop_early
    assert "order" not in RunHeader(info, None).to_data()


def test_the_seeded_order_is_a_shuffle_that_every_process_draws_alike() -> None:
    instances = tuple(Instance(f"i{k:03d}", f"input {k}", ("gold",)) for k in range(50))
    order = [instance.id for instance in seeded_order(instances, 0, "boolq")]
    assert sorted(order) == [instance.id for instance in instances] and order != sorted(order)
    assert order != [instance.id for instance in seeded_order(instances, 1, "boolq")]
    assert order != [instance.id for instance in seeded_order(instances, 0, "imdb")]
    script = (
        "from pytest_holistic.runspec import seeded_order\n"
        "from pytest_holistic.scenarios.instance import Instance\n"
        "items = tuple(Instance(f'i{k:03d}', f'input {k}', ('gold',)) for k in range(50))\n"
        "print(','.join(i.id for i in seeded_order(items, 0, 'boolq')))\n"
    )
    for hash_seed in ("1", "12345"):
        environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
        printed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, check=True)
        assert printed.stdout.strip().split(",") == order
