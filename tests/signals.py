"""Starting the pytest runs that tests interrupt, with the signal handling a terminal gives them.

A shell starts background jobs with SIGINT ignored, and a child inherits that, so a test run from a script's
background job would "press Ctrl-C" on a pytest that cannot hear it. The runs that tests interrupt set SIGINT
and SIGTERM to Python's defaults themselves, first thing (in the child's own code: a ``preexec_fn`` is unsafe in
a process with threads, and these tests run scripted servers in threads).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
