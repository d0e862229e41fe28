"""Models: the batch-first protocol, the backend registry, and the response cache in front of them."""

from __future__ import annotations

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
from .registry import Backend, BuiltModel, resolve_backend
from .scripted import ScriptedModel


def load_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Load ``spec`` the way ``--model`` does (entry points and built-ins; no pytest hook): for use outside pytest."""
    return resolve_backend(spec, options or ModelOptions()).load()


__all__ = [
    "Backend",
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
    "resolve_backend",
]
