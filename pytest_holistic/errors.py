"""Error types: what the user must fix versus what is our bug.

User errors carry a one-line message that names the thing at fault and the fix; the plugin turns them
into collection errors, usage errors or error outcomes without a traceback. :func:`error_line` is how any other
error (a library's, the system's) is reported in one line.
"""

from __future__ import annotations


class HolisticError(Exception):
    """Base class of every error raised on purpose by pytest-holistic."""


class UserError(HolisticError):
    """Bad input from the user: a suite file, an option, a gate, a model name. The message is the fix."""


class ScenarioError(UserError):
    """A scenario cannot be loaded or is malformed (duplicate ids, empty, unreadable file)."""


class GateSyntaxError(UserError):
    """A gate expression does not parse."""


class ModelLoadError(UserError):
    """The requested model could not be loaded."""


class ModelOutputError(HolisticError):
    """The model returned something unusable (NaN log-probabilities, wrong number of results)."""


class InternalError(HolisticError):
    """An invariant of pytest-holistic itself was broken: a bug to report, not a user mistake."""


def error_line(error: BaseException | str, fallback: str | None = None, *, typed: bool = False) -> str:
    """Any error in one line: the first non-empty line of its text, stripped.

    Errors reach the user as one line (a skip reason, an item's error outcome, a load failure), never as a
    traceback, and a library's message may be empty, start with blank lines or run on for a page. Every such
    line in the package is taken here, so they all read alike. Where the text has no line, the result is
    ``fallback``, else the exception's class name (``""`` for a text). ``typed`` writes ``Type: line`` (the class
    name alone when the text is empty), for an exception whose type says what failed (``OSError``, ``KeyError``).
    """
    text = error if isinstance(error, str) else str(error)
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    name = "" if isinstance(error, str) else type(error).__name__
    if not line:
        return name if fallback is None else fallback
    return f"{name}: {line}" if typed and name else line
