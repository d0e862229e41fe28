"""The managed vLLM engine's own options (``--model vllm:MODEL``): declared, read and checked.

The options are declared in :mod:`..builtin_options`, which every pytest start imports; the served model's request
options (``--holistic-concurrency``, ``--holistic-request-timeout``, ``--holistic-retries``) apply here too, since
everything after the engine's start is the served backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..builtin_options import CONCURRENCY, REQUEST_TIMEOUT, RETRIES, VLLM_ARGS, VLLM_PYTHON, VLLM_START_TIMEOUT
from ..builtin_options import VLLM_OPTIONS as OWN_OPTIONS
from ..options import Option, Values
from .base import ModelOptions

SCHEME = "vllm"
OPTIONS: tuple[Option[Any], ...] = (*OWN_OPTIONS, CONCURRENCY, REQUEST_TIMEOUT, RETRIES)


@dataclass(frozen=True)
class VllmOptions:
    """How to run the engine (its Python, its arguments, its start-up deadline) and how to send it requests."""

    python: str
    engine_args: tuple[str, ...] = ()
    start_timeout: float = 600.0
    revision: str | None = None  # None: a folder's content digest, or the hub snapshot's commit
    concurrency: int = 8
    request_timeout: float = 300.0
    retries: int = 4


def read(values: Values, common: ModelOptions) -> VllmOptions:
    return VllmOptions(
        python=values[VLLM_PYTHON],
        engine_args=values[VLLM_ARGS],
        start_timeout=values[VLLM_START_TIMEOUT],
        revision=common.revision,
        concurrency=values[CONCURRENCY],
        request_timeout=values[REQUEST_TIMEOUT],
        retries=values[RETRIES],
    )
