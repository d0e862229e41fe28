"""Text from data files, models and servers made safe to print: control characters become visible escapes.

A group name, an instance id or a server's message can carry ANSI/OSC sequences that recolour, clear or retitle
the user's terminal, or bidirectional overrides that reorder what is shown. Every line the plugin writes to
the terminal goes through :func:`printable`, which writes such characters as Python escapes (``\\x1b``), so
nothing is silently dropped and the line stays one line.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 controls (ESC, BEL, CR, LF, tab...), DEL, and the bidirectional marks, embeddings and isolates."""


def printable(text: str) -> str:
    """``text`` with every control or bidirectional-formatting character written as its escape."""
    return _UNSAFE.sub(lambda match: match[0].encode("unicode_escape").decode("ascii"), text)
