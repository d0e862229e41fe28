"""The served-model backend's own options (``--model openai:URL#NAME``): declared, read and checked.

The options themselves are declared in :mod:`..builtin_options`, which every pytest start imports; reading them
here imports no HTTP client code.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..builtin_options import API_ENDPOINT, API_ENDPOINTS, API_KEY_ENV, CONCURRENCY, REQUEST_TIMEOUT, RETRIES
from ..builtin_options import OPENAI_OPTIONS as OPTIONS
from ..options import Values
from .base import ModelOptions

SCHEME = "openai"


@dataclass(frozen=True)
class OpenAIOptions:
    """How to talk to the server: the revision its answers are cached under, and the options declared here."""

    revision: str | None = None  # None: answers are cached under ``served``
    api_key_env: str = "OPENAI_API_KEY"  # the environment variable holding the API key (never its value)
    api_endpoint: str = "auto"  # auto (completions, else chat), completions or chat
    concurrency: int = 8  # requests in flight at once, per process
    request_timeout: float = 300.0  # seconds one try of a request may take
    retries: int = 4  # further tries after a 429, a 5xx or a dropped connection


def read(values: Values, common: ModelOptions) -> OpenAIOptions:
    return OpenAIOptions(
        revision=common.revision,
        api_key_env=values[API_KEY_ENV],
        api_endpoint=values[API_ENDPOINT],
        concurrency=values[CONCURRENCY],
        request_timeout=values[REQUEST_TIMEOUT],
        retries=values[RETRIES],
    )


__all__ = [
    "API_ENDPOINT",
    "API_ENDPOINTS",
    "API_KEY_ENV",
    "CONCURRENCY",
    "OPTIONS",
    "REQUEST_TIMEOUT",
    "RETRIES",
    "SCHEME",
    "OpenAIOptions",
    "read",
]
