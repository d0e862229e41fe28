"""Starting the pytest runs that tests interrupt, with the signal handling a terminal gives them, and counting what
they computed.

A shell starts background jobs with SIGINT ignored, and a child inherits that, so a test run from a script's
background job would "press Ctrl-C" on a pytest that cannot hear it. The runs that tests interrupt set SIGINT
and SIGTERM to Python's defaults themselves, first thing (in the child's own code: a ``preexec_fn`` is unsafe in
a process with threads, and these tests run scripted servers in threads).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

_AS_UNDER_A_TERMINAL = (
    "import signal, sys, pytest; "
    "signal.signal(signal.SIGINT, signal.default_int_handler); "
    "signal.signal(signal.SIGTERM, signal.SIG_DFL); "
    "sys.exit(pytest.console_main())"
)


def start_pytest(root: Path, *args: str) -> subprocess.Popen[str]:
    """pytest in ``root`` in its own process group (so Ctrl-C can go to the whole group), output captured as text."""
    command = [sys.executable, "-c", _AS_UNDER_A_TERMINAL, "-p", "no:cacheprovider", *args]
    return subprocess.Popen(
        command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )


def cache_rows(root: Path) -> int:
    """The answers committed to the response cache under ``root``; 0 while the cache or its table is not made yet."""
    path = root / "reports" / ".cache" / "responses.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=30) as db:
            return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # created, but its table not made yet
        return 0


def computed(report: dict[str, Any]) -> int:
    """The requests the report's workers say they computed: with nothing lost, the cache's rows."""
    return sum(worker["generation_requests"] + worker["loglikelihood_requests"] for worker in report["workers"].values())
