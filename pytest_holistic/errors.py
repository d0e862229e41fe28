"""Error types: what the user must fix versus what is our bug.

User errors carry a one-line message that names the thing at fault and the fix; the plugin turns them
into collection errors, usage errors or error outcomes without a traceback.
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
