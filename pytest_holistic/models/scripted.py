"""A scripted model for fast, deterministic tests of suites and of the plugin itself.

Rules match a substring of the prompt (the last rule that matches wins, so a script can go from
general to specific). ``--model scripted:PATH`` reads rules from a JSON or YAML file:
``{"generate": {"capital of France": " Paris"}, "loglikelihood": {"Positive": -1.0}, "default": " no"}``.
Its identity is the file's name and content hash, so edited rules never reuse stale cached answers.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from ..errors import ModelLoadError
from .base import (
    BatchStreaming,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelInfo,
    ModelOptions,
)


class ScriptedModel(BatchStreaming):
    """Answers from rules; records the size of every batch it receives (to prove batching)."""

    def __init__(
        self,
        generate: Mapping[str, str] | Callable[[str], str] | None = None,
        loglikelihood: Mapping[str, float] | Callable[[str, str], float] | None = None,
        default: str = "",
        name: str = "scripted",
        revision: str | None = None,
        batch_size: int = 8,
        delay: float = 0.0,
    ) -> None:
        self._generate = generate or {}
        self._loglikelihood = loglikelihood or {}
        self._default = default
        self.batch_size = max(1, batch_size)
        self.delay = delay
        self.info = ModelInfo(name=name, backend="scripted", revision=revision)
        self.batches: list[tuple[str, int]] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        path = Path(path)
        text = _read(path)
        try:
            if path.suffix in (".yaml", ".yml"):
                import yaml

                script = yaml.safe_load(text)
            else:
                script = json.loads(text)
        except Exception as error:  # json and yaml raise different types; both mean a malformed script
            raise ModelLoadError(f"scripted model file {path} is not valid {path.suffix[1:] or 'JSON'}: {error}") from None
        if not isinstance(script, dict):
            raise ModelLoadError(f"scripted model file {path} must hold a mapping with 'generate'/'loglikelihood' rules")
        identity = _identity(path, text)
        return cls(
            script.get("generate"),
            script.get("loglikelihood"),
            str(script.get("default", "")),
            name=identity.name,
            revision=identity.revision,
            batch_size=int(script.get("batch_size", 8)),
            delay=float(script.get("delay", 0.0)),
        )

    def _answer(self, prompt: str) -> str:
        if callable(self._generate):
            return self._generate(prompt)
        answer = self._default
        for needle, text in self._generate.items():
            if needle in prompt:
                answer = text
        return answer

    def _score(self, context: str, continuation: str) -> float:
        if callable(self._loglikelihood):
            return float(self._loglikelihood(context, continuation))
        score = -float(len(continuation))
        for needle, value in self._loglikelihood.items():
            if needle in continuation or needle in context + continuation:
                score = float(value)
        return score

    def generate_batches(self, requests: Sequence[GenerationRequest]) -> Iterator[list[tuple[int, GenerationResult]]]:
        for start in range(0, len(requests), self.batch_size):
            chunk = requests[start : start + self.batch_size]
            yield list(enumerate(self._generate_all(chunk), start))

    def loglikelihood_batches(self, requests: Sequence[LoglikelihoodRequest]) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        for start in range(0, len(requests), self.batch_size):
            chunk = requests[start : start + self.batch_size]
            yield list(enumerate(self._score_all(chunk), start))

    def _generate_all(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.batches.append(("generate", len(requests)))
        time.sleep(self.delay)
        results = []
        for request in requests:
            text = self._answer(request.prompt)
            for stop in request.stop:
                if stop and stop in text:
                    text = text[: text.index(stop)]
            words = text.split() or [""]
            results.append(GenerationResult(text, tuple(-0.1 for _ in words[: request.max_tokens]), len(request.prompt.split())))
        return results

    def _score_all(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        self.batches.append(("loglikelihood", len(requests)))
        time.sleep(self.delay)
        return [
            LoglikelihoodResult(
                self._score(r.context, r.continuation),
                False,
                len((r.context + r.continuation).split()),
                len(r.continuation.split()),
            )
            for r in requests
        ]


def _read(path: Path) -> str:
    if not path.is_file():
        raise ModelLoadError(f"scripted model file {path} does not exist; pass --model scripted:PATH with a JSON or YAML file")
    return path.read_text(encoding="utf-8")


def _identity(path: Path, text: str) -> ModelInfo:
    return ModelInfo(
        name=f"scripted:{path.name}", backend="scripted", revision="sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    )


class ScriptedBackend:
    """``scripted:PATH``: identified by the file's content hash without parsing it, loaded by reading the rules."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def from_spec(cls, spec: str, options: ModelOptions) -> ScriptedBackend:
        return cls(Path(spec.split(":", 1)[1]).expanduser())

    def identify(self) -> ModelInfo | None:
        return _identity(self.path, _read(self.path))

    def load(self) -> ScriptedModel:
        return ScriptedModel.from_file(self.path)
