"""Models: the batch-first protocol, the backend registry, and the response cache in front of them."""

from __future__ import annotations

from ..options import Values
from .base import (
    BatchStreaming,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    Model,
    ModelInfo,
    ModelOptions,
)
from .registry import Backend, BackendKind, Backends, BuiltModel, entry_point_kinds
from .scripted import ScriptedModel


def load_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Load ``spec`` the way ``--model`` does (built-in backends and entry points, each backend's own options at their
    defaults; no pytest hook): for use outside pytest."""
    from .builtin import BUILTIN_BACKENDS

    backends = Backends.of((*BUILTIN_BACKENDS, *entry_point_kinds()))
    values = Values.defaults(option for kind in backends.kinds for option in kind.options)
    return backends.resolve(spec, backends.read(values, options or ModelOptions())).load()


__all__ = [
    "Backend",
    "BackendKind",
    "Backends",
    "BatchStreaming",
    "BuiltModel",
    "GenerationRequest",
    "GenerationResult",
    "LoglikelihoodRequest",
    "LoglikelihoodResult",
    "Model",
    "ModelInfo",
    "ModelOptions",
    "ScriptedModel",
    "load_model",
]
