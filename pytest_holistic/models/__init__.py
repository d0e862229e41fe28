"""Models: the batch-first protocol, and turning a ``--model`` string into a loaded model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .base import GenerationRequest, GenerationResult, LoglikelihoodRequest, LoglikelihoodResult, Model, ModelInfo
from .scripted import ScriptedModel


@dataclass(frozen=True)
class ModelOptions:
    """How to load: everything from the command line except the name."""

    device: str = "auto"
    dtype: str = "auto"
    batch_size: int | None = None  # None: chosen by the backend (8 on CPU, from free memory on GPU)
    revision: str | None = None
    trust_remote_code: bool = False


def identify(name: str, options: ModelOptions) -> ModelInfo | None:
    """Name and revision of the model ``name`` will load, found without loading it (None if unknown).

    A warm rerun answers every request from the response cache, so it should not pay for torch,
    transformers and the weights just to learn the cache key. Must agree with ``load_model``.
    """
    from . import embedded

    if name in embedded.ALIASES:
        return ModelInfo(name=embedded.NAME, backend="transformers", revision=embedded.revision())
    if name.startswith("scripted:"):
        return None  # cheap to load, so load it
    from .hf import hub_revision, weights_hash

    folder = Path(name).expanduser()
    if folder.is_dir():
        return ModelInfo(name=name, backend="transformers", revision=options.revision or weights_hash(folder))
    revision = hub_revision(name, options.revision)
    return ModelInfo(name=name, backend="transformers", revision=revision) if revision else None


def load_model(name: str, options: ModelOptions, identity: ModelInfo | None = None) -> Model:
    """``smollm2-135m`` (embedded default), ``scripted:PATH``, a local folder, or a hub name."""
    from . import embedded

    if name in embedded.ALIASES:
        from .hf import HFModel

        return HFModel.load(
            str(embedded.converted_dir()),
            revision=embedded.revision(),
            device=options.device,
            dtype=options.dtype,
            batch_size=options.batch_size,
            display_name=embedded.NAME,
        )
    if name.startswith("scripted:"):
        return ScriptedModel.from_file(name.split(":", 1)[1])
    from .hf import HFModel

    return HFModel.load(
        name,
        revision=identity.revision if identity is not None and Path(name).expanduser().is_dir() else options.revision,
        device=options.device,
        dtype=options.dtype,
        trust_remote_code=options.trust_remote_code,
        batch_size=options.batch_size,
    )


__all__ = [
    "GenerationRequest",
    "GenerationResult",
    "LoglikelihoodRequest",
    "LoglikelihoodResult",
    "Model",
    "ModelInfo",
    "ModelOptions",
    "ScriptedModel",
    "identify",
    "load_model",
]
