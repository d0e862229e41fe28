"""Chat templates for local (transformers) models: ``--holistic-chat-template auto|none|PATH``.

An instruct model answers best when its prompt looks like a chat turn, so a generation prompt (the text HELM
would send, few-shot examples included) becomes ONE user message rendered through a Jinja chat template, with
the assistant's turn opened after it. Log-likelihood requests are never wrapped: their scores are raw text.

The template is part of the cache identity, and that identity is computed without loading weights, so the
template a load will use is read here from the tokenizer's files (``chat_template.jinja``, else
``tokenizer_config.json``), the way transformers reads them, and checked against the loaded tokenizer.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ModelLoadError, ModelOutputError, error_line

CHOICES = ("auto", "none")
"""The option's keywords; anything else is the path of a Jinja file (checked to exist by the settings)."""

TEMPLATE_FILE = "chat_template.jinja"
TOKENIZER_CONFIG = "tokenizer_config.json"
PROBE = "Question: Is the probe rendered?\nAnswer:"
"""A prompt rendered once at load, so a broken template fails there, in one line, not in every item."""


@dataclass(frozen=True)
class ChatTemplate:
    """An applied template: where it came from (``tokenizer`` or a file's path) and its exact text."""

    source: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def label(self) -> str:
        """``tokenizer`` or the file's name: short enough for a cache key, and stable across folders."""
        return self.source if self.source == "tokenizer" else Path(self.source).name

    def variant(self) -> dict[str, str]:
        """The cache-identity entry: answers rendered through another template are other answers."""
        return {"chat_template": f"{self.label}:{self.sha256[:12]}"}


def details(template: ChatTemplate | None) -> dict[str, Any]:
    """What the model details record: ``chat_template`` (none, tokenizer or the file) and the template's sha256."""
    if template is None:
        return {"chat_template": "none", "chat_template_sha256": None}
    return {"chat_template": template.source, "chat_template_sha256": template.sha256}


def default_of(value: object) -> str | None:
    """A tokenizer's template as one text: a string as is; of named templates, ``default`` (what transformers uses)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, list):  # tokenizer_config.json's form of named templates: [{"name": ..., "template": ...}]
        value = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
    if isinstance(value, dict):
        found = value.get("default")
        return found if isinstance(found, str) and found else None
    return None


def pick(choice: str, declared: Callable[[], str | None]) -> ChatTemplate | None:
    """The template ``choice`` applies, or None for raw prompts; ``declared`` (the tokenizer's own) is read only for auto.

    ``auto`` is the tokenizer's template when it has one (instruct models), else raw prompts (base models such
    as GPT-2); ``none`` is always raw, as HELM sends them; a path is that file's text.
    """
    if choice == "none":
        return None
    if choice == "auto":
        text = declared()
        return ChatTemplate("tokenizer", text) if text else None
    return ChatTemplate(choice, read_file(Path(choice)))


def read_file(path: Path) -> str:
    """A template file's text; an unreadable one is a one-line load error naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ModelLoadError(f"cannot read chat template {path}: {reason}") from None


def in_folder(folder: Path) -> str | None:
    """The template a tokenizer saved in ``folder`` declares, read without transformers (the file wins, as in transformers)."""
    jinja = folder / TEMPLATE_FILE
    if jinja.is_file():
        return read_file(jinja) or None
    return _from_config(folder / TOKENIZER_CONFIG)


def _from_config(path: Path) -> str | None:
    """``chat_template`` of a tokenizer_config.json; None when absent or unreadable (loading will say what is wrong)."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return default_of(config.get("chat_template")) if isinstance(config, dict) else None


_UNKNOWN = object()
"""The hub cache cannot tell (a file neither cached nor known to be missing): only a tokenizer load can."""


def in_hub_cache(repo: str, revision: str | None) -> object:
    """A cached hub model's template (str), None when it has none, or ``_UNKNOWN`` when its files are not all cached."""
    from huggingface_hub import try_to_load_from_cache

    try:
        jinja = try_to_load_from_cache(repo, TEMPLATE_FILE, revision=revision)
        config = try_to_load_from_cache(repo, TOKENIZER_CONFIG, revision=revision)
    except Exception:  # noqa: BLE001 - an invalid repo id: loading will say what is wrong
        return _UNKNOWN
    if isinstance(jinja, str):
        return read_file(Path(jinja)) or None
    if not isinstance(config, str):
        return _UNKNOWN
    text = _from_config(Path(config))
    if text is None and jinja is None:  # chat_template.jinja was never looked for: it may exist on the hub
        return _UNKNOWN
    return text


def declared(spec: str, revision: str | None, trust_remote_code: bool = False) -> str | None:
    """The template ``spec`` (a folder or a hub name) declares, without loading weights.

    Read from its files when they are at hand (a folder, the local HF cache); otherwise from the tokenizer
    alone, which is small next to the model. What a load then applies is checked to be the same text.
    """
    folder = Path(spec).expanduser()
    if folder.is_dir():
        return in_folder(folder)
    found = in_hub_cache(spec, revision)
    if found is not _UNKNOWN:
        return found  # type: ignore[return-value]
    import transformers

    from .._hub import UNREACHABLE, offline

    local_only = offline() or bool(os.environ.get(UNREACHABLE))  # a dead hub would be retried for a minute
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            spec, revision=revision, trust_remote_code=trust_remote_code, local_files_only=local_only
        )
    except Exception as error:  # noqa: BLE001 - transformers raises OSError, ValueError...
        shown = error_line(error)
        raise ModelLoadError(f"could not read the tokenizer of {spec!r} for its chat template: {shown}") from None
    return default_of(getattr(tokenizer, "chat_template", None))


def render_prompt(tokenizer: Any, template: str, prompt: str) -> str:
    """``prompt`` as ONE user message through ``template``, with the assistant's turn opened: the text the model sees.

    Rendered to text (``tokenize=False``) and encoded afterwards without special tokens, so a template that
    writes its own BOS does not get a second one from the tokenizer.
    """
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], chat_template=template, add_generation_prompt=True, tokenize=False
    )
    return str(rendered)


def check_renders(tokenizer: Any, template: ChatTemplate) -> None:
    """Render a probe prompt once at load, so a broken template is one load error naming it (not one per item)."""
    try:
        render_prompt(tokenizer, template.text, PROBE)
    except Exception as error:  # noqa: BLE001 - jinja2.TemplateError, or whatever the template raises
        problem = describe(error)
    else:
        return
    where = "the tokenizer's chat template" if template.source == "tokenizer" else f"chat template {template.source}"
    raise ModelLoadError(f"{where} does not render: {problem}; fix it, or pass --holistic-chat-template none")


def render_or_fail(tokenizer: Any, template: ChatTemplate, prompt: str) -> str:
    """:func:`render_prompt`, with a template that raises on this prompt reported in one line."""
    try:
        return render_prompt(tokenizer, template.text, prompt)
    except Exception as error:  # noqa: BLE001 - a template's raise_exception(), or a Jinja runtime error
        problem = describe(error)
    raise ModelOutputError(f"chat template {template.label} failed on a prompt: {problem}")


def describe(error: BaseException) -> str:
    """A Jinja error in one line: its message, and the template line when Jinja knows it."""
    line = getattr(error, "lineno", None)
    return f"{type(error).__name__}: {error_line(error)}" + (f" (line {line})" if isinstance(line, int) else "")
