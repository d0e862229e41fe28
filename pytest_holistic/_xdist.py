"""Hooks that exist only when pytest-xdist is installed.

Scheduling: with ``-n N`` (xdist's default ``load`` distribution) whole shards go to one worker, so a
shard's requests are batched together and no request is computed by two workers. Per-worker
summaries (requests computed, device) travel back through ``workeroutput``.
"""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

from .execution import assign_shards


class ShardScheduling(LoadScopeScheduling):
    """xdist's scope scheduling, where a scope is a shard of a parametrized test function."""

    def __init__(self, config: pytest.Config, log: Any, shard_size: int) -> None:
        super().__init__(config, log)
        self._shard_size = shard_size
        self._scopes: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._scopes is None:
            self._scopes = assign_shards(self.collection or [], self._shard_size)
        return self._scopes.get(nodeid, nodeid)


class XdistHooks:
    def __init__(self, session: Any) -> None:
        self.session = session

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") == "load":
            return ShardScheduling(config, log, self.session.settings.shard_size)
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = session.config
        if hasattr(config, "workeroutput"):
            config.workeroutput["holistic"] = self.session.worker_summary()  # type: ignore[attr-defined]

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        if "holistic" in output:
            self.session.workers[str(getattr(node, "workerinput", {}).get("workerid", node))] = output["holistic"]
