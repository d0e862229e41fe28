"""pytest-holistic: holistic language-model evaluation as pytest tests.

Public API. Importing it is cheap: no torch, transformers or datasets until a model or dataset is used.
"""

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
from .scenarios import Fields, Instance, Reference, Scenario, csv_file, hf, jsonl, scenario

__version__ = "0.1.0"

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
    "__version__",
    "csv_file",
    "hf",
    "jsonl",
    "load_model",
    "metrics",
    "parse_gate",
    "scenario",
]
