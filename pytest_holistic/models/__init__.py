"""Models: the batch-first protocol, and turning a ``--model`` string into a loaded model."""

from __future__ import annotations

from dataclasses import dataclass

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


def load_model(name: str, options: ModelOptions) -> Model:
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
        revision=options.revision,
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
    "load_model",
]
