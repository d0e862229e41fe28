"""Hooks that exist only when pytest-xdist is installed, registered on the controller.

Scheduling: with ``-n N`` (xdist's default ``load`` distribution) whole shards go to one worker, so a
shard's requests are batched together and no request is computed by two workers. What the workers send is
relayed to the reporter's hooks (``channels``), and so are the items expected and the workers lost: nothing
here writes into the reporter.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from xdist.scheduler import LoadScopeScheduling

from ._roles import ENGINE, LEDGER, STOPS
from .channels import relay_output, relay_report
from .errors import error_line
from .progress import ItemProgress, terminal_emitter
from .progress.durations import read_item_seconds
from .shards import assign_shards

if TYPE_CHECKING:
    from .stops import StopTable


class ShardScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types: its scheduler is Any
    """xdist's scope scheduling, where a scope is a shard of a parametrized test function.

    Crash handling is xdist's ``load`` rule, not ``loadscope``'s: the item that was running when a worker
    died is reported once as failed and never rerun; the rest of its shard goes back to the queue once.
    (Requeueing the crashing item too would crash one replacement worker after another.)
    """

    def __init__(self, config: pytest.Config, log: Any, shard_size: int) -> None:
        super().__init__(config, log)
        self._shard_size = shard_size
        self._scopes: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._scopes is None:
            self._scopes = assign_shards(self.collection or [], self._shard_size)
        return self._scopes.get(nodeid, nodeid)

    def remove_node(self, node: Any) -> str | None:
        """Forget a finished or dead worker; for a dead one, return the item it died on and requeue the others."""
        workload = self.assigned_work.pop(node)
        pending: list[tuple[str, str]] = [
            (scope, nodeid) for scope, unit in workload.items() for nodeid, done in unit.items() if not done
        ]
        if not pending:
            return None
        crashed_scope, crashitem = pending[0]
        workload[crashed_scope][crashitem] = True
        for scope, unit in workload.items():
            remaining = {nodeid: False for nodeid, done in unit.items() if not done}
            if remaining:
                self.workqueue[scope] = remaining
        for live in self.nodes:
            self._reschedule(live)
        return crashitem

    def _reschedule(self, node: Any) -> None:
        """As xdist's, but a replacement worker still collecting gets its work when its collection arrives."""
        if node not in self.registered_collections:
            return
        super()._reschedule(node)


class XdistController:
    """The controller's xdist hooks: shard scheduling, and what the workers send relayed to the reporter's hooks."""

    def __init__(
        self,
        config: pytest.Config,
        shard_size: int,
        ledger_folder: Callable[[], Path],
        stops: StopTable | None = None,
        engine_folder: Path | None = None,
    ) -> None:
        """``ledger_folder``: where the workers keep their ledgers (made on first use), the folder the reporter reads;
        ``stops``: the session's early-stop table, which the reporter writes and each worker reads; ``engine_folder``:
        the session's engine, which every worker's model uses (``--model vllm:MODEL``)."""
        self.config = config
        self.shard_size = shard_size
        self.ledger_folder = ledger_folder
        self.stops = stops
        self.engine_folder = engine_folder
        self.progress: ItemProgress | None = None  # items/s and time left: a worker's own lines never reach the terminal

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") == "load":
            return ShardScheduling(config, log, self.shard_size)
        return None

    def pytest_configure_node(self, node: Any) -> None:
        """Tell each worker where to keep its ledger, which the reporter reads if the worker never reports back."""
        node.workerinput[LEDGER] = str(self.ledger_folder())
        if self.stops is not None:
            node.workerinput[STOPS] = {"path": str(self.stops.path), "session": self.stops.session}
        if self.engine_folder is not None:
            node.workerinput[ENGINE] = str(self.engine_folder)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The controller never collects: the first worker's collection is the list of items the run means to run."""
        self.config.hook.pytest_holistic_items_expected(config=self.config, nodeids=list(ids))
        if self.progress is None and (terminal := terminal_emitter(self.config)) is not None:
            self.progress = ItemProgress(*terminal)
            self.progress.expect(ids, read_item_seconds(self.config))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        relay_report(self.config, report)
        if self.progress is not None and (report.when == "call" or (report.when == "setup" and not report.passed)):
            self.progress.finished(report.nodeid)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error is not None:  # a worker that died (killed, crashed) rather than finished
            reason = error_line(str(error), "died")
            self.config.hook.pytest_holistic_worker_lost(config=self.config, worker=str(node.gateway.id), reason=reason)
        relay_output(self.config, getattr(node, "workeroutput", None) or {})
