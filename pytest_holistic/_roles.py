"""Whether this process is an xdist worker: the one fact both roles are decided by."""

from __future__ import annotations

import pytest


def is_worker(config: pytest.Config) -> bool:
    """True in an xdist worker; the controller (or a plain run) is the only process that writes reports."""
    return hasattr(config, "workerinput")
