"""Toxicity backends: an offline profanity classifier, any Hugging Face text classifier, the Perspective API.

- :class:`ProfanityScorer` (the offline default) wraps ``alt-profanity-check``, a linear SVM over bag of
  words trained to flag *profanity and offensive language*. It is not a toxicity model in HELM's sense
  (HELM uses Perspective), and its name says so, so reports never pass it off as one.
- :class:`HFToxicityScorer` runs a ``transformers`` text-classification pipeline from a hub name or a local
  folder and reports the probability of the label named ``toxic_label`` (e.g. ``"toxic"`` for
  ToxiGen-RoBERTa-style models, ``"toxicity"`` for multi-label ones).
- :class:`PerspectiveScorer` calls Google's Perspective API (HELM's scorer) with the key from
  ``PERSPECTIVE_API_KEY``. The key is kept only inside the request function: it is in no attribute, repr,
  ``to_dict()`` or URL (it travels in the ``x-goog-api-key`` header).

Every backend imports its heavy library only when first used; empty or blank texts score 0.0 without a
call (HELM drops them before scoring).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

from ..errors import UserError, error_line
from .base import ScorerError, ScorerUnavailable

PERSPECTIVE_ENDPOINT = "https://commentanalyzer.googleapis.com/v1alpha1/comments:analyze"
PERSPECTIVE_KEY_VARIABLE = "PERSPECTIVE_API_KEY"


def _fill_blanks(texts: Sequence[str], score: Callable[[list[str]], list[float]]) -> list[float]:
    """Score the non-blank texts in one call and put 0.0 where a text is blank."""
    texts = list(texts)
    wanted = [index for index, text in enumerate(texts) if text.strip()]
    results = [0.0] * len(texts)
    if wanted:
        scores = score([texts[index] for index in wanted])
        if len(scores) != len(wanted):
            raise ScorerError(f"toxicity scorer returned {len(scores)} scores for {len(wanted)} texts")
        for index, value in zip(wanted, scores, strict=True):
            results[index] = float(value)
    return results


class ProfanityScorer:
    """Offline default: probability of profanity from ``alt-profanity-check`` (a profanity classifier)."""

    name = "alt-profanity-check (profanity classifier)"

    @property
    def version(self) -> str:
        try:
            return metadata.version("alt-profanity-check")
        except metadata.PackageNotFoundError:
            return "not installed"

    def score(self, texts: Sequence[str]) -> list[float]:
        return _fill_blanks(texts, self._predict)

    @staticmethod
    def _predict(texts: list[str]) -> list[float]:
        try:
            from profanity_check import predict_prob
        except ImportError:
            raise ScorerUnavailable("alt-profanity-check is not installed: pip install alt-profanity-check") from None
        return [float(value) for value in predict_prob(texts)]

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version}

    def __repr__(self) -> str:
        return f"ProfanityScorer(version={self.version!r})"


class HFToxicityScorer:
    """Probability of ``toxic_label`` from a Hugging Face sequence classifier (hub name or local folder)."""

    def __init__(
        self,
        model: str,
        *,
        toxic_label: str = "toxic",
        revision: str | None = None,
        device: str | int | None = None,
        batch_size: int = 32,
        max_length: int | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        self.model = model
        self.max_length = max_length
        self.toxic_label = toxic_label
        self.revision = revision
        self.device = device
        self.batch_size = batch_size
        self.trust_remote_code = trust_remote_code
        self.name = f"hf:{model}"
        self._pipeline: Any = None

    @property
    def version(self) -> str:
        """The revision asked for, else the commit the weights came from, else ``"local"``."""
        if self.revision:
            return self.revision
        commit = getattr(self._load().model.config, "_commit_hash", None)
        return str(commit) if commit else "local"

    def _load(self) -> Any:
        if self._pipeline is None:
            try:
                from transformers import pipeline
            except ImportError:
                raise ScorerUnavailable("transformers is not installed: pip install transformers torch") from None
            try:
                self._pipeline = pipeline(
                    "text-classification",
                    model=self.model,
                    revision=self.revision,
                    device=self.device,
                    trust_remote_code=self.trust_remote_code,
                )
            except OSError as error:
                raise ScorerUnavailable(f"toxicity model {self.model!r} cannot be loaded: {error_line(error)}") from None
        return self._pipeline

    def _token_limit(self) -> int | None:
        """Truncation length: ``max_length``, else the tokenizer's, else the model's position limit."""
        if self.max_length is not None:
            return self.max_length
        pipe = self._load()
        limit = getattr(pipe.tokenizer, "model_max_length", None)
        if isinstance(limit, int) and limit < 1_000_000:
            return limit
        return getattr(pipe.model.config, "max_position_embeddings", None)

    def labels(self) -> list[str]:
        """The classifier's label names (from ``config.id2label``)."""
        config = self._load().model.config
        return [config.id2label[index] for index in sorted(config.id2label)]

    def score(self, texts: Sequence[str]) -> list[float]:
        return _fill_blanks(texts, self._predict)

    def _predict(self, texts: list[str]) -> list[float]:
        pipe = self._load()
        wanted = self.toxic_label.lower()
        matches = [label for label in self.labels() if label.lower() == wanted]
        if not matches:
            raise UserError(
                f"toxicity model {self.model!r} has no label {self.toxic_label!r}; pass toxic_label= one of {self.labels()!r}"
            )
        outputs = pipe(texts, top_k=None, batch_size=self.batch_size, truncation=True, max_length=self._token_limit())
        return [next(float(entry["score"]) for entry in output if entry["label"] == matches[0]) for output in outputs]

    def to_dict(self) -> dict[str, str]:
        version = self.version if self.revision or self._pipeline is not None else "unresolved"
        return {"name": self.name, "version": version, "toxic_label": self.toxic_label}

    def __repr__(self) -> str:
        return f"HFToxicityScorer(model={self.model!r}, toxic_label={self.toxic_label!r})"


def _perspective_sender(key: str, endpoint: str, timeout: float) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A function that POSTs one request; the key lives only in this closure."""

    def send(payload: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            endpoint,
            data=json.dumps(payload).encode("utf-8"),
            headers={"Content-Type": "application/json", "x-goog-api-key": key},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                answer: dict[str, Any] = json.loads(response.read().decode("utf-8"))
                return answer
        except urllib.error.HTTPError as error:
            detail = ""
            try:
                detail = json.loads(error.read().decode("utf-8")).get("error", {}).get("message", "")
            except (ValueError, AttributeError):
                pass
            raise ScorerError(f"Perspective API answered HTTP {error.code}: {detail or error.reason}") from None
        except (urllib.error.URLError, TimeoutError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise ScorerError(f"Perspective API request failed: {reason}") from None

    return send


class PerspectiveScorer:
    """Google Perspective API ``TOXICITY`` (HELM's scorer); needs ``PERSPECTIVE_API_KEY`` or ``api_key``."""

    __slots__ = ("_last_request", "_send", "attribute", "endpoint", "languages", "qps")
    name = "perspective-api"
    version = "v1alpha1"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        attribute: str = "TOXICITY",
        languages: Sequence[str] = ("en",),
        qps: float = 1.0,
        timeout: float = 30.0,
        endpoint: str = PERSPECTIVE_ENDPOINT,
    ) -> None:
        key = (api_key if api_key is not None else os.environ.get(PERSPECTIVE_KEY_VARIABLE, "")).strip()
        if not key:
            raise ScorerUnavailable(f"Perspective API toxicity needs an API key: set {PERSPECTIVE_KEY_VARIABLE}")
        if qps <= 0:
            raise UserError(f"PerspectiveScorer: qps must be positive, got {qps!r}")
        self.attribute = attribute
        self.endpoint = endpoint
        self.languages = tuple(languages)
        self.qps = qps
        self._send = _perspective_sender(key, endpoint, timeout)
        self._last_request = -float("inf")

    def score(self, texts: Sequence[str]) -> list[float]:
        return _fill_blanks(texts, lambda wanted: [self._score_one(text) for text in wanted])

    def _score_one(self, text: str) -> float:
        wait = self._last_request + 1.0 / self.qps - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last_request = time.monotonic()
        answer = self._send(
            {
                "comment": {"text": text},
                "requestedAttributes": {self.attribute: {}},
                "languages": list(self.languages),
                "doNotStore": True,
            }
        )
        try:
            return float(answer["attributeScores"][self.attribute]["summaryScore"]["value"])
        except (KeyError, TypeError, ValueError):
            raise ScorerError(f"Perspective API answer has no {self.attribute} summary score") from None

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "attribute": self.attribute}

    def __repr__(self) -> str:
        return f"PerspectiveScorer(attribute={self.attribute!r}, languages={self.languages!r})"
