"""The batch-first model protocol and the plain request/result records it exchanges.

Requests are frozen and hashable, so identical requests are computed once and results can be cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class GenerationRequest:
    """Greedy (temperature 0) by default, so results are reproducible and cacheable."""

    prompt: str
    max_tokens: int = 32
    stop: tuple[str, ...] = ("\n",)
    temperature: float = 0.0
    seed: int = 0


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Log-probability of ``continuation`` given ``context``."""

    context: str
    continuation: str


@dataclass(frozen=True)
class GenerationResult:
    text: str
    token_logprobs: tuple[float, ...] = ()
    tokens_in: int = 0
    seconds: float = 0.0

    @property
    def logprob(self) -> float:
        return float(sum(self.token_logprobs))

    @property
    def tokens_out(self) -> int:
        return len(self.token_logprobs)


@dataclass(frozen=True)
class LoglikelihoodResult:
    logprob: float
    is_greedy: bool = False
    tokens_in: int = 0
    tokens_scored: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class ModelInfo:
    """Provenance recorded in every report: which weights produced the numbers."""

    name: str
    backend: str
    revision: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Model(Protocol):
    """Every backend answers whole lists of requests, so it can batch them as it sees fit."""

    info: ModelInfo

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]: ...

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]: ...
