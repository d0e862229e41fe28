"""A scripted model for fast, deterministic tests of suites and of the plugin itself.

Rules match a substring of the prompt (the last rule that matches wins, so a script can go from
general to specific). ``--model scripted:PATH`` reads rules from a JSON or YAML file:
``{"generate": {"capital of France": " Paris"}, "loglikelihood": {"Positive": -1.0}, "default": " no"}``.
Its identity is the file's name and content hash, so edited rules never reuse stale cached answers.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelLoadError, error_line
from .base import (
    BatchStreaming,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelInfo,
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
        """The model a rules file describes; the whole file is checked first (see :func:`read_script`)."""
        path = Path(path)
        text, script = read_script(path)
        identity = _identity(path, text)
        return cls(
            script.get("generate"),
            script.get("loglikelihood"),
            script.get("default", ""),
            name=identity.name,
            revision=identity.revision,
            batch_size=script.get("batch_size", 8),
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


SCRIPT_KEYS = ("generate", "loglikelihood", "default", "batch_size", "delay")
EXAMPLE = 'generate: {"capital of France": " Paris"}'


def _not_a_file(path: Path) -> str | None:
    """Why ``path`` is not a regular file, or None: a FIFO would block the read and /dev/null reads as empty."""
    try:
        if path.is_file():
            return None
        if path.is_dir():
            return "is a folder"
        if path.exists():
            return "is not a regular file (a device, a pipe or a socket)"
        return "is a broken symbolic link" if path.is_symlink() else "does not exist"
    except OSError as error:  # e.g. a folder on the way that this user may not look into
        return f"cannot be looked up ({error.strerror or error})"


def _read(path: Path) -> str:
    problem = _not_a_file(path)
    if problem is not None:
        raise ModelLoadError(f"scripted model file {path} {problem}; pass --model scripted:PATH with a JSON or YAML file")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ModelLoadError(
            f"scripted model file {path} is not UTF-8 (byte {error.start}: {error.reason}); save it as UTF-8"
        ) from None
    except OSError as error:
        raise ModelLoadError(f"scripted model file {path} cannot be read: {error.strerror or error}") from None


def _parse(path: Path, text: str) -> object:
    """JSON for ``.json`` (and any suffix other than .yaml/.yml), YAML otherwise; a syntax error names the line."""
    if path.suffix not in (".yaml", ".yml"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise ModelLoadError(f"scripted model file {path}:{error.lineno}: not valid JSON ({error.msg})") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(error, "problem", None) or error_line(error)
        raise ModelLoadError(f"scripted model file {where}: not valid YAML ({problem})") from None


def _check_rules(path: Path, key: str, rules: object, kind: type | tuple[type, ...], wanted: str) -> None:
    if not isinstance(rules, Mapping):
        raise ModelLoadError(
            f"scripted model file {path}: {key!r} must be a mapping of prompt substring to {wanted}, "
            f"got {type(rules).__name__} {rules!r:.60}"
        )
    for needle, value in rules.items():
        if not isinstance(needle, str) or not needle:
            raise ModelLoadError(f"scripted model file {path}: {key!r} key {needle!r} must be a non-empty string (quote it)")
        if isinstance(value, bool) or not isinstance(value, kind) or (isinstance(value, float) and not math.isfinite(value)):
            raise ModelLoadError(
                f"scripted model file {path}: {key}[{needle!r}] must be {wanted}, got {type(value).__name__} {value!r:.60}"
            )


def _check_script(path: Path, script: object) -> dict[str, Any]:
    """Every field of a rules file, checked at once so a mistake is one line naming the file and the field."""
    if script is None:
        raise ModelLoadError(f"scripted model file {path} is empty; write rules such as {EXAMPLE}")
    if not isinstance(script, dict):
        raise ModelLoadError(
            f"scripted model file {path} must hold a mapping with keys {', '.join(SCRIPT_KEYS)}, got {type(script).__name__}"
        )
    for key in script:
        if key not in SCRIPT_KEYS:
            close = difflib.get_close_matches(str(key), SCRIPT_KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ModelLoadError(f"scripted model file {path}: unknown key {key!r}; {hint}known keys: {', '.join(SCRIPT_KEYS)}")
    if "generate" in script:
        _check_rules(path, "generate", script["generate"], str, "an answer string")
    if "loglikelihood" in script:
        _check_rules(path, "loglikelihood", script["loglikelihood"], (int, float), "a number (a log-probability)")
    default = script.get("default", "")
    if not isinstance(default, str):
        raise ModelLoadError(f"scripted model file {path}: 'default' must be a string, got {type(default).__name__} {default!r}")
    batch_size = script.get("batch_size", 8)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ModelLoadError(f"scripted model file {path}: 'batch_size' must be a whole number >= 1, got {batch_size!r}")
    delay = script.get("delay", 0.0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay < math.inf:
        raise ModelLoadError(f"scripted model file {path}: 'delay' must be a number of seconds >= 0, got {delay!r}")
    return script


def read_script(path: Path) -> tuple[str, dict[str, Any]]:
    """The text of a rules file (its identity) and its checked content."""
    text = _read(path)
    return text, _check_script(path, _parse(path, text))


def _identity(path: Path, text: str) -> ModelInfo:
    return ModelInfo(
        name=f"scripted:{path.name}", backend="scripted", revision="sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    )


class ScriptedBackend:
    """``scripted:PATH``: identified by the file's content hash without parsing it, loaded by reading the rules."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def from_spec(cls, spec: str) -> ScriptedBackend:
        given = spec.split(":", 1)[1]
        if not given.strip():
            raise ModelLoadError(f"--model {spec!r} names no file; pass --model scripted:PATH with a JSON or YAML file")
        return cls(Path(given).expanduser())

    def check(self) -> None:
        """Read and check the whole rules file now (start-up), so a mistake is a usage error before any item."""
        read_script(self.path)

    def identify(self) -> ModelInfo | None:
        return _identity(self.path, _read(self.path))

    def load(self) -> ScriptedModel:
        return ScriptedModel.from_file(self.path)
