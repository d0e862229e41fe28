"""The worker side's run order (``stops.RunOrder``): each stop-early run's selected instances in the seeded order, arranged
once from the collected works, and which items lie past the stop the controller wrote."""

from __future__ import annotations

from pathlib import Path

from pytest_holistic.execution import Work
from pytest_holistic.runspec import RunSpec, build_run, item_id
from pytest_holistic.scenarios.instance import Instance, Reference
from pytest_holistic.scenarios.scenario import Scenario
from pytest_holistic.stops import RunOrder, Stop, StopTable


def _run(key: str, tmp_path: Path, stop_early: bool) -> RunSpec:
    instances = [Instance(f"i{k}", "x", (Reference("y"),), group="a" if k % 2 else ("b" if k % 3 else None)) for k in range(8)]
    return build_run(key, (Scenario("eight", local=instances),), {}, "local", None, tmp_path, stop_early=stop_early)


def _works(run: RunSpec, deselected: tuple[str, ...] = ()) -> list[Work]:
    return [Work(f"{run.key}[{item_id(i)}]", run, i) for i in run.items if i.id not in deselected]


def test_each_stop_early_run_is_arranged_in_its_collection_order_with_its_groups(tmp_path: Path) -> None:
    stopping, full = _run("t.py::test_stop", tmp_path, True), _run("t.py::test_full", tmp_path, False)
    order = RunOrder()
    works = _works(stopping, deselected=("i3",))
    order.arrange([*works, *_works(full)])
    assert order.ids(stopping.key) == tuple(work.instance.id for work in works)  # the seeded order, less the deselected
    assert "i3" not in order.ids(stopping.key) and len(order.ids(stopping.key)) == 7
    assert order.groups(stopping.key) == tuple(work.instance.group for work in works)
    assert order.ids(full.key) == () and order.groups(full.key) == ()  # a run that cannot stop early has no order
    assert order.ids("t.py::test_unknown") == ()


def test_past_the_stop_is_the_stop_written_read_against_the_seeded_order(tmp_path: Path) -> None:
    stopping, full = _run("t.py::test_stop", tmp_path, True), _run("t.py::test_full", tmp_path, False)
    path = tmp_path / "early-stops.sqlite"
    order = RunOrder(StopTable(path, "session"))
    works, others = _works(stopping), _works(full)
    order.arrange([*works, *others])
    assert [order.past_stop(work) for work in works] == [None] * 8  # nothing written yet: everything is computed
    StopTable(path, "session").write(Stop(stopping.key, 3, 8, "gate `exact_match>=0.6` holds"))
    StopTable(path, "session").write(Stop(full.key, 3, 8, "never read: this run cannot stop early"))
    assert [order.past_stop(work) for work in works] == [None] * 3 + ["gate `exact_match>=0.6` holds"] * 5
    assert [order.past_stop(work) for work in others] == [None] * 8
    stranger = Work(f"{stopping.key}[x]", stopping, Instance("x", "x", (Reference("y"),)))  # not among the works arranged
    assert order.past_stop(stranger) is None


def test_without_a_stop_table_nothing_is_past_a_stop(tmp_path: Path) -> None:
    stopping = _run("t.py::test_stop", tmp_path, True)
    order = RunOrder(None)
    order.arrange(_works(stopping))
    assert order.ids(stopping.key) != () and all(order.past_stop(work) is None for work in _works(stopping))
