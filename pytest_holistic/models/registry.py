"""From a ``--model`` string to a backend: one registry, so adding a backend touches no if-chain.

A backend is an object with ``identify()`` (the cache identity, computed without loading weights, or
None when it cannot be known cheaply) and ``load()`` (the loaded ``Model``). Resolution asks, in order:

1. a ``pytest_holistic_make_model(config, name)`` implementation (conftest or plugin), whose answer is
   passed in here as ``provided``: a backend, or an already built model;
2. the ``pytest_holistic.models`` entry point named by the spec's scheme (``openai`` for
   ``openai:http://host/v1#name``): a factory ``(spec, options) -> backend``;
3. the built-in schemes (``scripted:PATH``), the embedded model's names, and finally any other
   string as a transformers hub name or local folder.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..errors import ModelLoadError
from .base import Model, ModelInfo, ModelOptions

ENTRY_POINT_GROUP = "pytest_holistic.models"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


@runtime_checkable
class Backend(Protocol):
    """Where a model comes from: its identity without loading, and the loaded model."""

    def identify(self) -> ModelInfo | None: ...

    def load(self) -> Model: ...


BackendFactory = Callable[[str, ModelOptions], Backend]


@dataclass(frozen=True)
class BuiltModel:
    """A model that a plugin already built: its identity is its own ``info``."""

    model: Model

    def identify(self) -> ModelInfo | None:
        return self.model.info

    def load(self) -> Model:
        return self.model


def scheme_of(spec: str) -> str | None:
    """``scripted`` for ``scripted:rules.yaml``; None for hub names, folders and paths that exist."""
    if Path(spec).expanduser().exists():
        return None
    match = _SCHEME.match(spec)
    return match[1] if match else None


def _builtin_schemes() -> Mapping[str, BackendFactory]:
    from .openai_backend import OpenAIBackend
    from .scripted import ScriptedBackend

    return {"scripted": ScriptedBackend.from_spec, "openai": OpenAIBackend.from_spec}


def _entry_point_schemes() -> Mapping[str, importlib.metadata.EntryPoint]:
    return {entry.name: entry for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def known_schemes() -> list[str]:
    return sorted({*_builtin_schemes(), *_entry_point_schemes()})


def _from_entry_point(entry: importlib.metadata.EntryPoint) -> BackendFactory:
    try:
        factory: BackendFactory = entry.load()
    except Exception as error:  # a broken third-party plugin: name it and its package
        raise ModelLoadError(
            f"model backend {entry.name!r} ({entry.value}) failed to import: {type(error).__name__}: {error}; "
            "reinstall or fix the package that registers it"
        ) from None
    if not callable(factory):
        raise ModelLoadError(
            f"model backend {entry.name!r} ({entry.value}) is not callable; it must be a factory (spec, options) -> backend"
        )
    return factory


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


def check_model_spec(spec: str, options: ModelOptions) -> None:
    """Check at start-up what can be checked without loading: a scripted model's whole file, a served model's URL.

    Other specs are checked when first used (a warm rerun never loads the model); a plugin registering the
    ``scripted`` scheme itself takes it over, so its file is left to that plugin.
    """
    scheme = scheme_of(spec)
    if scheme in ("scripted", "openai") and scheme in _entry_point_schemes():
        return
    if scheme == "scripted":
        from .scripted import ScriptedBackend

        ScriptedBackend.from_spec(spec, options).check()
    elif scheme == "openai":
        from .openai_backend import parse_spec

        parse_spec(spec)  # a malformed URL is a usage error now; the server itself is asked on first use


def resolve_backend(spec: str, options: ModelOptions, provided: object | None = None) -> Backend:
    """The backend for ``spec`` (see the module docstring for the order)."""
    if provided is not None:
        return _checked(provided, "pytest_holistic_make_model")
    scheme = scheme_of(spec)
    if scheme is not None:
        builtin = _builtin_schemes()
        plugins = _entry_point_schemes()
        if scheme in plugins:
            return _checked(_from_entry_point(plugins[scheme])(spec, options), f"model backend {scheme!r}")
        if scheme in builtin:
            return builtin[scheme](spec, options)
        raise ModelLoadError(
            f"no model backend handles {scheme!r} in --model {spec!r} (known: {', '.join(known_schemes())}); "
            f"install the plugin that registers it under the {ENTRY_POINT_GROUP!r} entry point, or pass a hub name or folder"
        )
    from . import embedded

    if spec in embedded.ALIASES:
        return embedded.EmbeddedBackend(options)
    from .hf import HFBackend

    return HFBackend(spec, options)
