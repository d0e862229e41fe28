"""Secrets kept out of everything the plugin shows or stores: the command line, a ``--model`` spec, a model's name.

Removed wherever they appear: the value of an option or variable whose name marks a secret, ``Authorization:`` and
``Cookie:`` headers, the user and password of URLs, and well-known key formats. The report's provenance, the terminal,
the served models' messages (:mod:`.models.redact`) and the worker's records all use it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

REDACTED = "***"

_SENSITIVE = re.compile(
    r"(key|token|secret|passwd|password|passphrase|pwd|auth|authorization|credentials?|cookie)$", re.IGNORECASE
)
"""A name part that marks a secret (``HF_TOKEN``, ``--api-key``, ``OPENAI_API_KEY``, ``db_password``), matched at the
end of each part so ``--max-tokens`` and ``--tokenizer`` keep their values."""

_URL_USER = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@")
_ASSIGNMENT = re.compile(r"^(?P<name>-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)=(?P<value>.*)$", re.DOTALL)
_HEADER = re.compile(
    r"^(?P<name>(?:proxy-)?authorization|x-api-key|api-key|cookie)\s*:\s*(?P<value>.*)$", re.IGNORECASE | re.DOTALL
)
_SCHEMES = frozenset({"bearer", "basic", "token", "digest"})
_TOKEN_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+)"
)
"""Well-known key formats (OpenAI, Hugging Face, GitHub, Slack, AWS, Google, JWT): removed wherever they appear."""


def sensitive(name: str) -> bool:
    """Whether an option or variable name says its value is a secret: one of its parts (split at ``-``, ``_``, ``.``) does."""
    return any(_SENSITIVE.search(part) for part in re.split(r"[-_.]+", name) if part)


def _scrub_token(token: str) -> str:
    """One argument with its secrets replaced: ``NAME=value`` and ``--name=value`` by name, headers, URLs' user info, key shapes."""
    header = _HEADER.match(token)
    if header is not None and header["value"].strip():
        return f"{header['name']}: {REDACTED}"
    assignment = _ASSIGNMENT.match(token)
    if assignment is not None:
        if sensitive(assignment["name"]):
            return f"{assignment['name']}={REDACTED}"
        token = f"{assignment['name']}={_scrub_token(assignment['value'])}"  # --env=HF_TOKEN=abc
    token = _URL_USER.sub(lambda match: f"{match['scheme']}{REDACTED}@", token)
    return _TOKEN_SHAPES.sub(REDACTED, token)


def scrub_text(text: str) -> str:
    """One value (a ``--model`` spec, a model name) with its secrets replaced: URLs' user info and key shapes."""
    return _scrub_token(text)


def _takes_secret(token: str) -> bool:
    """Whether the next argument is a secret: after ``--api-key`` (no ``=``) or a bare ``Authorization:``."""
    if token.startswith("-") and "=" not in token:
        return sensitive(token)
    header = _HEADER.match(token)
    return header is not None and not header["value"].strip()


def scrub_command(argv: Sequence[str]) -> list[str]:
    """The command line with every secret replaced by ``***``, so a report can be shared.

    Removed: the value of an option whose name marks a secret (``--api-key=sk-...``, ``--hf-token abc``), of an
    environment-style ``NAME=value`` whose name does (``HF_TOKEN=...``), ``Authorization:``/``Cookie:`` headers,
    the user and password of URLs (``https://user:pass@host``), and well-known key formats anywhere (``sk-...``,
    ``hf_...``, ``ghp_...``, ``AKIA...``). The rest of each argument stays as typed, so the command still shows how
    the run was made. An option named like a secret but followed by another option is taken as a flag.
    """
    tokens = [str(token) for token in argv]
    out: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        out.append(_scrub_token(token))
        index += 1
        if _takes_secret(token) and index < len(tokens) and not tokens[index].startswith("-"):
            if tokens[index].lower() in _SCHEMES and index + 1 < len(tokens):  # "Authorization:" "Bearer" "<token>"
                out.append(tokens[index])
                index += 1
            out.append(REDACTED)
            index += 1
    return out
