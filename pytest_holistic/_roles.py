"""The small floor both roles stand on: stash keys, and whether this process is an xdist worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # named in the stash keys' type arguments below; importing them at run time would be circular
    from .answers import AnswerProbe  # noqa: F401
    from .execution import Answer, Work  # noqa: F401
    from .report.reporter import Reporter  # noqa: F401
    from .worker import WorkerSide  # noqa: F401

WORKER_SIDE = pytest.StashKey["WorkerSide"]()
REPORTER = pytest.StashKey["Reporter"]()
ITEM_WORK = pytest.StashKey["Work"]()
ITEM_ANSWER = pytest.StashKey["Answer"]()
ITEM_SCORES = pytest.StashKey[dict[str, float]]()
ITEM_PROBE = pytest.StashKey["AnswerProbe"]()


def is_worker(config: pytest.Config) -> bool:
    """True in an xdist worker; the controller (or a plain run) is the only process that writes reports."""
    return hasattr(config, "workerinput")
