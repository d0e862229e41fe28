"""The served-model backend's own options (``--model openai:URL#NAME``): declared, read and checked.

Kept apart from :mod:`.openai_backend` so that declaring them at every start imports no HTTP client code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import UserError
from ..options import Given, Option, Values, whole_number
from .base import ModelOptions

SCHEME = "openai"
API_ENDPOINTS = ("auto", "completions", "chat")


@dataclass(frozen=True)
class OpenAIOptions:
    """How to talk to the server: the revision its answers are cached under, and the options declared here."""

    revision: str | None = None  # None: answers are cached under ``served``
    api_key_env: str = "OPENAI_API_KEY"  # the environment variable holding the API key (never its value)
    api_endpoint: str = "auto"  # auto (completions, else chat), completions or chat
    concurrency: int = 8  # requests in flight at once, per process
    request_timeout: float = 300.0  # seconds one try of a request may take
    retries: int = 4  # further tries after a 429, a 5xx or a dropped connection


def _env_name(given: Given) -> str:
    name = str(given.value or "OPENAI_API_KEY").strip()
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise UserError(  # the value is not shown: it may be the key itself
            "--holistic-api-key-env is not an environment variable's name; give the name (OPENAI_API_KEY), never the key"
        )
    return name


def _seconds(given: Given) -> float:
    if given.value is None:
        return 300.0
    try:
        seconds = float(str(given.value))
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise given.error("must be a number of seconds > 0")
    return seconds


def _concurrency(given: Given) -> int:
    return 8 if given.value is None else whole_number(given, 1, "(requests in flight)")


def _retries(given: Given) -> int:
    if given.value is None:
        return 4
    if not given.text.isdigit():
        raise given.error("must be a whole number >= 0")
    return int(given.text)


def _endpoint(given: Given) -> str:
    return given.text or "auto"


API_KEY_ENV = Option(
    "--holistic-api-key-env",
    "environment variable with the API key of an openai: model (default OPENAI_API_KEY; the key is never written)",
    _env_name,
    metavar="NAME",
)
API_ENDPOINT = Option(
    "--holistic-api-endpoint",
    "openai: models: auto (default: /v1/completions when served, else /v1/chat/completions), completions or chat",
    _endpoint,
    choices=API_ENDPOINTS,
)
CONCURRENCY = Option(
    "--holistic-concurrency", "openai: models: requests in flight at once per process (default 8)", _concurrency, metavar="N"
)
REQUEST_TIMEOUT = Option(
    "--holistic-request-timeout",
    "openai: models: wall-clock seconds one try of a request may take, connecting, headers and body together, "
    "before it is retried (default 300); one request takes at most (retries + 1) x SECONDS + retries x 30 s",
    _seconds,
    metavar="SECONDS",
)
RETRIES = Option(
    "--holistic-retries",
    "openai: models: further tries after a 429, a 5xx, a timeout or a dropped connection (default 4): a request "
    "is sent at most N + 1 times, waiting the server's Retry-After (at most 30 s) or a backoff in between",
    _retries,
    metavar="N",
)
OPTIONS: tuple[Option[Any], ...] = (API_KEY_ENV, API_ENDPOINT, CONCURRENCY, REQUEST_TIMEOUT, RETRIES)


def read(values: Values, common: ModelOptions) -> OpenAIOptions:
    return OpenAIOptions(
        revision=common.revision,
        api_key_env=values[API_KEY_ENV],
        api_endpoint=values[API_ENDPOINT],
        concurrency=values[CONCURRENCY],
        request_timeout=values[REQUEST_TIMEOUT],
        retries=values[RETRIES],
    )
