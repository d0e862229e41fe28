"""Secrets out of what a server says, before it is shown or stored.

A server's error message may quote the key it was given: in full, or partly masked the way providers do
(``Incorrect API key provided: sk-proj-****...abcd``). Every text that comes from a served model's server (error
details, non-JSON snippets, connection errors, the model names it lists) goes through a :class:`Redactor` built
from this run's secrets: each secret is removed, and so is every piece of it of :data:`FRAGMENT` characters or
more; then ``Bearer``/``Basic`` credentials, well-known key formats (:func:`.provenance.scrub_text`) and long
tokens mixing letters and digits, which is what keys look like. Messages lose a hash now and then; reports never
carry a key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..scrubbing import REDACTED, scrub_text

FRAGMENT = 6
"""A run of this many characters of a secret, found anywhere in a message, is taken as a piece of it."""

_CREDENTIALS = re.compile(r"\b(Bearer|Basic|Token)\s+[^\s\"',;]+", re.IGNORECASE)
_KEY_LIKE = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{24,}(?![A-Za-z0-9])")
"""24 or more letters and digits, both present: keys' random part (model names have dashes and dots in between)."""


class Redactor:
    """Removes the given secrets, their long pieces, and anything shaped like a key from a text."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self._secrets = tuple(sorted({secret for secret in secrets if secret}, key=len, reverse=True))
        self._pieces = frozenset(
            secret[start : start + FRAGMENT] for secret in self._secrets for start in range(len(secret) - FRAGMENT + 1)
        )

    def exact(self, text: str) -> str:
        """``text`` with each whole secret replaced: for model output, where a short piece may be a real answer."""
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text

    def __call__(self, text: str) -> str:
        """``text`` with every secret, piece of one, credential and key-shaped token replaced by ``***``."""
        text = self._without_pieces(self.exact(text))
        text = _CREDENTIALS.sub(lambda match: f"{match[1]} {REDACTED}", text)
        return _KEY_LIKE.sub(REDACTED, scrub_text(text))

    def _without_pieces(self, text: str) -> str:
        if not self._pieces:
            return text
        covered = [False] * len(text)
        for start in range(len(text) - FRAGMENT + 1):
            if text[start : start + FRAGMENT] in self._pieces:
                covered[start : start + FRAGMENT] = [True] * FRAGMENT
        if not any(covered):
            return text
        out: list[str] = []
        for index, char in enumerate(text):
            if not covered[index]:
                out.append(char)
            elif index == 0 or not covered[index - 1]:
                out.append(REDACTED)
        return "".join(out)
