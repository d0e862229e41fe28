"""Signal dispositions for the pytest runs that tests interrupt.

A shell starts background jobs with SIGINT ignored, and a child inherits that, so a test run from a script's
background job would "press Ctrl-C" on a pytest that cannot hear it. The runs that tests interrupt start with
SIGINT at its default, as under a terminal.
"""

from __future__ import annotations

import signal


def as_under_a_terminal() -> None:
    """``preexec_fn`` for Popen: SIGINT and SIGTERM at their defaults in the child, whatever the test runner inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
