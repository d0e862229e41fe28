"""A served model's answers, checked where they enter: right types, possible values, sizes the request allows.

A server is outside the run's control; what it returns becomes scores only after passing here. A log-probability
must be a finite number <= 0 (up to :data:`LOGPROB_SLACK` of float error, read as 0): a value of +7.5 would become
a probability of 1808. Generated text may be at most :func:`text_bound` characters, :data:`TOKEN_CHARS` per token
asked for plus a margin; the response body at most :func:`body_bound` bytes, so a 60 MB answer to
``max_tokens=4`` is refused before it is read, parsed or stored. A violation is a :class:`ModelOutputError` of
that request, one line naming the server (``where``) and what was wrong.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal, overload

from ..errors import ModelOutputError

LOGPROB_SLACK = 1e-4
TOKEN_CHARS = 256
"""The longest text one token may stand for (real vocabularies stay far below; runs of spaces come closest)."""
TEXT_MARGIN = 1024
BODY_BYTES_PER_CHAR = 256
"""JSON bytes allowed per character of prompt or answer: token lists, offsets, alternatives and escapes included."""
BODY_BASE = 1 << 20


def text_bound(max_tokens: int) -> int:
    """The most characters an answer to ``max_tokens`` tokens may have."""
    return max(max_tokens, 0) * TOKEN_CHARS + TEXT_MARGIN


def body_bound(prompt_chars: int, max_tokens: int) -> int:
    """The most bytes a response to a request with this prompt and ``max_tokens`` may have (echo included)."""
    return BODY_BASE + BODY_BYTES_PER_CHAR * (prompt_chars + text_bound(max_tokens))


def json_type(value: Any) -> str:
    """What a parsed JSON value is, in JSON's words: null, a boolean, a number, a string, a list or an object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def bad(where: str, problem: str) -> ModelOutputError:
    return ModelOutputError(f"{where}: {problem}")


def first_choice(answer: Any, where: str) -> Mapping[str, Any]:
    """``choices[0]`` of an answer, which must be an object with a non-empty list of objects under ``choices``."""
    choices = answer.get("choices") if isinstance(answer, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise bad(where, "the answer has no 'choices' list of objects")
    return choices[0]


def text(value: Any, where: str, limit: int, name: str = "text") -> str:
    """A generated text: a string (None reads as empty) of at most ``limit`` characters."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise bad(where, f"its {name} is not a string (got {json_type(value)})")
    if len(value) > limit:
        raise bad(where, f"its {name} has {len(value)} characters, more than the request's tokens allow ({limit})")
    return value


@overload
def logprob(value: Any, where: str, optional: Literal[False] = False) -> float: ...


@overload
def logprob(value: Any, where: str, optional: bool) -> float | None: ...


def logprob(value: Any, where: str, optional: bool = False) -> float | None:
    """A log-probability: a finite number <= 0 (tiny positive float error reads as 0); None only if ``optional``."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad(where, f"a log-probability is {_shown(value)}, not a number")
    number = float(value)
    if not math.isfinite(number) or number > LOGPROB_SLACK:
        raise bad(where, f"a log-probability of {number!r} is impossible (it must be finite and <= 0)")
    return min(number, 0.0)


def strings(value: Any, where: str, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise bad(where, f"its {name} is not a list of strings")
    return value


def whole_numbers(value: Any, where: str, name: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(item, int) and not isinstance(item, bool) for item in value):
        raise bad(where, f"its {name} is not a list of whole numbers")
    return value


def listed(block: Mapping[str, Any], key: str) -> Any:
    """``block[key]``, with a missing key or null read as an empty list."""
    value = block.get(key)
    return [] if value is None else value


def count(value: Any) -> int:
    """A token count from ``usage``: a whole number >= 0, else 0 (unknown)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
