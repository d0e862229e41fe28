"""Models: the batch-first protocol, the backend registry, and the response cache in front of them.

A backend may also offer optional features, each a protocol the caller checks with ``isinstance``: ``Cancellable``
(end requests in flight when the session ends), ``ConcurrentStreams`` (streams may run side by side),
``ReportsCapabilities`` (say at collection which kind of request it cannot answer) and ``AnswersAlone`` (answer one
request outside any batch, for the determinism check). ``Failed`` is the outcome of a request that failed alone.
"""

from __future__ import annotations

from ..options import Values
from .base import (
    AnswersAlone,
    BatchStreaming,
    Cancellable,
    ConcurrentStreams,
    Failed,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    Model,
    ModelInfo,
    ModelOptions,
    ReportsCapabilities,
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
    "AnswersAlone",
    "Backend",
    "BackendKind",
    "Backends",
    "BatchStreaming",
    "BuiltModel",
    "Cancellable",
    "ConcurrentStreams",
    "Failed",
    "GenerationRequest",
    "GenerationResult",
    "LoglikelihoodRequest",
    "LoglikelihoodResult",
    "Model",
    "ModelInfo",
    "ModelOptions",
    "ReportsCapabilities",
    "ScriptedModel",
    "load_model",
]
