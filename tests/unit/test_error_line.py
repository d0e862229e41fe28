"""``errors.error_line``: the one way the package reports an error in one line, and no module doing it again."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_holistic.errors import error_line

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_holistic"


class Wordy(Exception):
    """An exception whose text is whatever it was given (a library's report of a page, say)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


def raised(error: BaseException) -> BaseException:
    with pytest.raises(type(error)) as info:
        raise error
    return info.value


def test_an_empty_text_is_the_class_name_or_the_fallback() -> None:
    assert error_line(raised(ValueError())) == "ValueError"
    assert error_line(raised(Wordy(" \n\t\n "))) == "Wordy"
    assert error_line(raised(ValueError()), "died") == "died"
    assert error_line(raised(ValueError()), "") == ""
    assert error_line(raised(OSError()), typed=True) == "OSError"


def test_a_multi_line_text_is_its_first_line() -> None:
    assert error_line(raised(RuntimeError("weights are corrupt\nTraceback (most recent call last):\n  ..."))) == (
        "weights are corrupt"
    )
    assert error_line(raised(Wordy("first\r\nsecond"))) == "first"


def test_leading_blank_lines_and_spaces_are_skipped() -> None:
    assert error_line(raised(Wordy("\n\n   \n  the real problem  \nmore"))) == "the real problem"
    assert error_line(raised(Wordy("\n  the real problem  \nmore")), typed=True) == "Wordy: the real problem"


def test_typed_puts_the_class_name_in_front() -> None:
    assert error_line(raised(KeyError("column")), typed=True) == "KeyError: 'column'"
    try:
        json.loads("{")
    except json.JSONDecodeError as error:
        assert error_line(error, typed=True) == f"JSONDecodeError: {error}"
    else:
        pytest.fail("json.loads('{') did not raise")


def test_a_text_is_read_as_an_exceptions_text_would_be() -> None:
    assert error_line("\n  server says no  \n details") == "server says no"
    assert error_line("   ") == ""
    assert error_line("", "died") == "died"
    assert error_line("just this", typed=True) == "just this"  # a text has no class name to put in front


COPY = re.compile(r"str\(\w+\)(\.strip\(\))?\.splitlines\(\)|\.splitlines\(\) or \[type\(")
"""A first line of an exception's text taken by hand: what ``error_line`` is for."""


def test_no_module_takes_an_errors_first_line_by_hand() -> None:
    copies = [
        f"{path.relative_to(PACKAGE.parent)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "errors.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if COPY.search(line)
    ]
    assert copies == []
