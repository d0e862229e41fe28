"""pytest-holistic: holistic language-model evaluation as pytest tests.

Public API. Importing it is cheap: each name loads its submodule when first used, and torch, transformers or
datasets only when a model or dataset is used.
"""

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # what type checkers and editors see; at run time each name loads on first use
    from . import metrics
    from .gates import Gate, parse_gate
    from .models import (
        Backend,
        BackendKind,
        BatchStreaming,
        GenerationRequest,
        GenerationResult,
        LoglikelihoodRequest,
        LoglikelihoodResult,
        Model,
        ModelInfo,
        ModelOptions,
        ScriptedModel,
        load_model,
    )
    from .options import Given, Option
    from .plans import AdapterSpec, Completion
    from .scenarios import Fields, Instance, Reference, Scenario, csv_file, hf, jsonl
    from .scenarios.scenario import scenario
    from .writer_kinds import WriterContext, WriterKind

__version__ = "0.1.0"

_HOMES: Final = {
    "Gate": "gates",
    "parse_gate": "gates",
    "Backend": "models",
    "BackendKind": "models",
    "BatchStreaming": "models",
    "GenerationRequest": "models",
    "GenerationResult": "models",
    "LoglikelihoodRequest": "models",
    "LoglikelihoodResult": "models",
    "Model": "models",
    "ModelInfo": "models",
    "ModelOptions": "models",
    "ScriptedModel": "models",
    "load_model": "models",
    "Given": "options",
    "Option": "options",
    "AdapterSpec": "plans",
    "Completion": "plans",
    "Fields": "scenarios",
    "Instance": "scenarios",
    "Reference": "scenarios",
    "Scenario": "scenarios",
    "csv_file": "scenarios",
    "hf": "scenarios",
    "jsonl": "scenarios",
    "scenario": "scenarios",
    "metrics": "metrics",
    "WriterContext": "writer_kinds",
    "WriterKind": "writer_kinds",
}
"""Each public name and the submodule it lives in (``metrics`` is the submodule itself)."""


def __getattr__(name: str) -> Any:
    """A public name, imported from its submodule when first used (PEP 562): ``import pytest_holistic`` stays cheap,
    which matters because pytest imports the plugin in every run of every project where it is installed."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{home}")
    return module if name == home else getattr(module, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = [
    "AdapterSpec",
    "Backend",
    "BackendKind",
    "BatchStreaming",
    "Completion",
    "Fields",
    "Gate",
    "GenerationRequest",
    "GenerationResult",
    "Given",
    "Instance",
    "LoglikelihoodRequest",
    "LoglikelihoodResult",
    "Model",
    "ModelInfo",
    "ModelOptions",
    "Option",
    "Reference",
    "Scenario",
    "ScriptedModel",
    "WriterContext",
    "WriterKind",
    "__version__",
    "csv_file",
    "hf",
    "jsonl",
    "load_model",
    "metrics",
    "parse_gate",
    "scenario",
]
