"""An option that a model-scored metric or a model backend declares next to its own code.

The owner says what the user types (flag, ini key, help, default) and how a value is checked (``parse``, which
returns the value or raises a one-line :class:`UserError` naming ``given.origin``). The plugin adds every
registered owner's options to pytest and reads them once, so the settings module knows none of them by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from .errors import UserError

if TYPE_CHECKING:
    import pytest

T = TypeVar("T")


@dataclass(frozen=True)
class Given:
    """A raw option value and where it came from, so a parse error names what the user wrote."""

    value: str | bool | None  # the text typed (True/False for a switch); None: not given and no default
    origin: str  # "--holistic-toxicity-scorer" or "holistic_toxicity_scorer in tox.ini"
    base: Path  # the folder a relative path in the value starts from (the ini file's for an ini value)

    @property
    def text(self) -> str:
        """The value stripped ('' for none)."""
        return "" if self.value is None else str(self.value).strip()

    def error(self, problem: str) -> UserError:
        """``ORIGIN = 'VALUE': PROBLEM``, the form most option errors take."""
        return UserError(f"{self.origin} = {self.value!r}: {problem}")


@dataclass(frozen=True)
class Option(Generic[T]):
    """One command-line option, and optionally its ini key; the command line wins over the ini file."""

    flag: str  # "--holistic-request-timeout"
    help: str
    parse: Callable[[Given], T] = field(compare=False)
    default: str | None = None  # the raw value when neither the command line nor the ini file gives one
    ini: str | None = None  # the ini key, or None for a command-line option only
    ini_help: str | None = None  # the ini key's help (default: ``help``)
    metavar: str | None = None
    choices: tuple[str, ...] | None = None  # refused by pytest's own parser, as its other choice options
    switch: bool = False  # a flag without a value (True when given)

    @property
    def dest(self) -> str:
        """The attribute name pytest stores the command-line value under (``holistic_request_timeout``)."""
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Values:
    """The parsed value of every declared option, looked up by the option itself, so each owner gets its own types."""

    parsed: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    def __getitem__(self, option: Option[T]) -> T:
        return cast(T, self.parsed[option.flag])

    @classmethod
    def defaults(cls, options: Iterable[Option[Any]], base: Path | None = None) -> Values:
        """Each option's default, parsed as if nothing were given (for use outside pytest)."""
        folder = base or Path.cwd()
        return cls(MappingProxyType({o.flag: o.parse(Given(o.default, o.flag, folder)) for o in options}))


def declare(parser: pytest.Parser, option: Option[Any]) -> None:
    """Add ``option`` to pytest's command line (group ``holistic``) and, if it has one, its ini key."""
    extra: dict[str, Any] = {"action": "store_true", "default": False} if option.switch else {"default": None}
    if option.metavar is not None:
        extra["metavar"] = option.metavar
    if option.choices is not None:
        extra["choices"] = option.choices
    parser.getgroup("holistic").addoption(option.flag, dest=option.dest, help=option.help, **extra)
    if option.ini is not None:
        parser.addini(option.ini, option.ini_help or option.help, default=option.default or "")


def read(config: pytest.Config, option: Option[T]) -> T:
    """The option's value: the command line's when given, else the ini file's, else the default; parsed."""
    value = getattr(config.option, option.dest)
    if value is None and option.ini is not None:
        return option.parse(pick(config, None, option.flag, option.ini))
    return option.parse(Given(option.default if value is None else value, option.flag, config.invocation_params.dir))


def pick(config: pytest.Config, value: str | bool | None, flag: str, ini: str) -> Given:
    """The command-line value when one was given (0 and '' included), else the ini value (relative to the ini file)."""
    if value is not None:
        return Given(value, flag, config.invocation_params.dir)
    folder = config.inipath.parent if config.inipath is not None else config.rootpath
    return Given(config.getini(ini), ini_origin(config, ini), folder)


def ini_origin(config: pytest.Config, ini: str) -> str:
    return f"{ini} in {config.inipath.name}" if config.inipath is not None else f"{ini} (ini)"


def ini_flag(config: pytest.Config, ini: str) -> bool:
    """A boolean ini key; a value pytest cannot read as one is a line naming the key (pytest's own names only the
    value: "invalid truth value 'maybe'")."""
    import pytest  # already loaded in any session that reads an ini key

    try:
        return bool(config.getini(ini))
    except (ValueError, pytest.UsageError) as error:  # pytest raises the second, naming the value only
        raise UserError(f"{ini_origin(config, ini)}: {error}; use true or false (also yes/no, on/off, 1/0)") from None


def whole_number(given: Given, least: int, fix: str = "") -> int:
    """A whole number >= ``least`` (``0`` is refused when ``least`` is 1, never read as 'not given')."""
    text = given.text
    if isinstance(given.value, bool) or not text.lstrip("+").isdigit():
        raise UserError(f"{given.origin} = {given.value!r}: must be a whole number >= {least} {fix}".rstrip())
    number = int(text)
    if number < least:
        raise UserError(f"{given.origin} = {number}: must be a whole number >= {least} {fix}".rstrip())
    return number


def one_of(choices: tuple[str, ...], fallback: str) -> Callable[[Given], str]:
    """A parse for a value that must be one of ``choices`` (``fallback`` when not given)."""

    def parse(given: Given) -> str:
        text = fallback if given.value is None else given.text
        if text not in choices:
            raise given.error(f"use one of {', '.join(choices)}")
        return text

    return parse


def switch(given: Given) -> bool:
    """A flag without a value: whether it was given."""
    return bool(given.value)
