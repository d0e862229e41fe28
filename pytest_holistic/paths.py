"""Where pytest-holistic keeps what it derives once per machine: converted models, fingerprints, scorer layouts."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$PYTEST_HOLISTIC_CACHE_DIR``, else ``$XDG_CACHE_HOME/pytest-holistic``, else ``~/.cache/pytest-holistic``."""
    explicit = os.environ.get("PYTEST_HOLISTIC_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pytest-holistic"
