"""Hooks that exist only when pytest-xdist is installed, registered on the controller.

Scheduling: with ``-n N`` (xdist's default ``load`` distribution) whole shards go to one worker, so a
shard's requests are batched together and no request is computed by two workers. Each worker's summary
arrives through ``workeroutput`` and is handed to the reporter through ``pytest_holistic_worker_finished``.
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


class XdistController:
    """The controller's xdist hooks: shard scheduling, and worker summaries passed on as data."""

    def __init__(self, config: pytest.Config, shard_size: int) -> None:
        self.config = config
        self.shard_size = shard_size

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") == "load":
            return ShardScheduling(config, log, self.shard_size)
        return None

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        if "holistic" in output:
            self.config.hook.pytest_holistic_worker_finished(config=self.config, summary=output["holistic"])
