"""From a ``--model`` string to a backend: the registered kinds of backend, so adding one touches no if-chain.

A backend is an object with ``identify()`` (the cache identity, computed without loading weights, or
None when it cannot be known cheaply) and ``load()`` (the loaded ``Model``). A :class:`BackendKind` says which
specs it takes, which options it declares, how it reads them into its own options object, how it checks a spec at
start-up and how it makes the backend. The built-in kinds are registered the way a plugin registers its own
(``Extensions.add_backend``); an installed package may also name, under the ``pytest_holistic.models`` entry point
group, a kind or a plain factory ``(spec, options) -> backend``. Resolution asks, in order:

1. a ``pytest_holistic_make_model(config, name)`` implementation (conftest or plugin), whose answer is
   passed in here as ``provided``: a backend, or an already built model;
2. for a spec with a scheme (``openai`` in ``openai:http://host/v1#name``), the kind of that name registered last,
   so a plugin can take over a built-in scheme;
3. for any other spec, the kind registered last whose ``takes`` accepts it (the embedded model's names, then any
   string as a transformers hub name or local folder).
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from ..command_line import ENTRY_POINT_GROUP
from ..errors import ModelLoadError
from ..options import Option, Values
from .base import Model, ModelInfo, ModelOptions

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
T = TypeVar("T")


@runtime_checkable
class Backend(Protocol):
    """Where a model comes from: its identity without loading, and the loaded model."""

    def identify(self) -> ModelInfo | None: ...

    def load(self) -> Model: ...


BackendFactory = Callable[[str, ModelOptions], object]
"""A third party's plain factory: ``(spec, the run's common options) -> a backend or a built model``."""


@dataclass(frozen=True)
class BuiltModel:
    """A model that a plugin already built: its identity is its own ``info``."""

    model: Model

    def identify(self) -> ModelInfo | None:
        return self.model.info

    def load(self) -> Model:
        return self.model


@dataclass(frozen=True)
class BackendKind(Generic[T]):
    """One kind of backend, declared next to its code: the specs it takes, its options, its start-up check.

    ``read`` turns the values of the declared options (and the run's common :class:`ModelOptions`) into the
    kind's own options object ``T``, checking them together; it runs at start-up for every registered kind, so a
    bad value is a usage error whichever model is asked for. ``make(spec, options)`` is called once, when the
    model is first needed; ``check(spec, options)`` at start-up, for what can be checked without loading.
    """

    name: str  # the scheme (``openai`` for ``openai:...``), unless ``takes`` says which specs the kind takes
    make: Callable[[str, T], object]
    read: Callable[[Values, ModelOptions], T]
    options: tuple[Option[Any], ...] = ()
    takes: Callable[[str], bool] | None = None  # for specs without a scheme: whether this kind takes one
    check: Callable[[str, T], None] | None = None
    engine: bool = False  # its backends run an engine server the session starts once (``base.ManagesEngine``)


def common_options(_values: Values, options: ModelOptions) -> ModelOptions:
    """The ``read`` of a kind that declares no options: it gets the run's common options."""
    return options


def scheme_of(spec: str) -> str | None:
    """``scripted`` for ``scripted:rules.yaml``; None for hub names, folders and paths that exist."""
    if Path(spec).expanduser().exists():
        return None
    match = _SCHEME.match(spec)
    return match[1] if match else None


def entry_point_kinds() -> Iterator[BackendKind[Any]]:
    """The kinds installed packages register under the entry point group, imported now, since they may declare
    options; one that fails to import, or is neither a kind nor a factory, fails in one line when it is used."""
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        yield _from_entry_point(entry)


def _from_entry_point(entry: importlib.metadata.EntryPoint) -> BackendKind[Any]:
    try:
        loaded = entry.load()
    except Exception as error:  # a broken third-party plugin: name it and its package
        return _failing(
            entry.name,
            f"model backend {entry.name!r} ({entry.value}) failed to import: {type(error).__name__}: {error}; "
            "reinstall or fix the package that registers it",
        )
    if isinstance(loaded, BackendKind):
        return loaded
    if not callable(loaded):
        return _failing(
            entry.name,
            f"model backend {entry.name!r} ({entry.value}) is not callable; it must be a factory (spec, options) -> backend "
            "or a BackendKind",
        )
    factory: BackendFactory = loaded
    return BackendKind(entry.name, factory, common_options)


def _failing(name: str, message: str) -> BackendKind[ModelOptions]:
    def make(_spec: str, _options: ModelOptions) -> object:
        raise ModelLoadError(message)

    return BackendKind(name, make, common_options)


def _checked(candidate: object, origin: str) -> Backend:
    """Accept a backend, or wrap a built model; anything else is a one-line error naming ``origin``."""
    if isinstance(candidate, Model):
        return BuiltModel(candidate)
    if isinstance(candidate, Backend):
        return candidate
    raise ModelLoadError(
        f"{origin} returned {type(candidate).__name__}, which is neither a backend (identify() and load()) nor a model "
        "(info, generate, loglikelihood, generate_batches, loglikelihood_batches; subclass "
        "pytest_holistic.models.BatchStreaming to get the list methods from the batch ones)"
    )


@dataclass(frozen=True)
class Backends:
    """The registered kinds in registration order; a kind registered again under its name replaces the earlier one."""

    kinds: tuple[BackendKind[Any], ...] = ()

    @classmethod
    def of(cls, kinds: Iterable[BackendKind[Any]]) -> Backends:
        by_name: dict[str, BackendKind[Any]] = {}
        for kind in kinds:
            by_name.pop(kind.name, None)  # moved to the end: the later registration wins
            by_name[kind.name] = kind
        return cls(tuple(by_name.values()))

    def known_schemes(self) -> list[str]:
        return sorted(kind.name for kind in self.kinds if kind.takes is None)

    def kind_for(self, spec: str) -> BackendKind[Any] | None:
        """The kind that takes ``spec``, or None when none does (a scheme nothing registers)."""
        scheme = scheme_of(spec)
        for kind in self.kinds[::-1]:
            if scheme is not None:
                if kind.takes is None and kind.name == scheme:
                    return kind
            elif kind.takes is not None and kind.takes(spec):
                return kind
        return None

    def read(self, values: Values, options: ModelOptions) -> dict[str, object]:
        """Each kind's own options object, by kind name (a bad combination is a UserError)."""
        return {kind.name: kind.read(values, options) for kind in self.kinds}

    def check(self, spec: str, own: Mapping[str, object]) -> None:
        """Check at start-up what the kind taking ``spec`` can check without loading (a scripted file, a URL).

        A spec no kind takes is left for resolution, which names the known schemes when the model is first needed.
        """
        kind = self.kind_for(spec)
        if kind is not None and kind.check is not None:
            kind.check(spec, own[kind.name])

    def resolve(self, spec: str, own: Mapping[str, object], provided: object | None = None) -> Backend:
        """The backend for ``spec`` (see the module docstring for the order); ``own``: each kind's options by name."""
        if provided is not None:
            return _checked(provided, "pytest_holistic_make_model")
        kind = self.kind_for(spec)
        if kind is None:
            scheme = scheme_of(spec)
            raise ModelLoadError(
                f"no model backend handles {scheme!r} in --model {spec!r} (known: {', '.join(self.known_schemes())}); "
                f"install the plugin that registers it under the {ENTRY_POINT_GROUP!r} entry point, or pass a hub name or folder"
                if scheme is not None
                else f"no model backend takes --model {spec!r}; register one that does, or use a scheme "
                f"({', '.join(self.known_schemes())})"
            )
        return _checked(kind.make(spec, own[kind.name]), f"model backend {kind.name!r}")
