"""Hooks that exist only when pytest-xdist is installed: per-worker summaries to the controller."""

from __future__ import annotations

from typing import Any

import pytest


class XdistHooks:
    def __init__(self, session: Any) -> None:
        self.session = session

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = session.config
        if hasattr(config, "workeroutput"):
            config.workeroutput["holistic"] = self.session.worker_summary()  # type: ignore[attr-defined]

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        if "holistic" in output:
            self.session.workers[str(getattr(node, "workerinput", {}).get("workerid", node))] = output["holistic"]
