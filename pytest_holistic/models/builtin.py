"""The backends that come with pytest-holistic, registered the way a plugin registers its own.

Each kind joins a backend's declaration (its options and how they are read, in a module cheap to import) with its
code, imported only when a model is made or a spec checked; so declaring them at every start loads no model code.
"""

from __future__ import annotations

from typing import Any

from . import embedded, hf_options, openai_options, vllm_options
from .base import ModelOptions
from .hf_options import HFOptions
from .openai_options import OpenAIOptions
from .registry import BackendKind, common_options
from .vllm_options import VllmOptions

DEFAULT_MODEL = embedded.NAME
"""The model a run evaluates when none is named."""


def _transformers(spec: str, options: HFOptions) -> object:
    from .hf import HFBackend

    return HFBackend(spec, options)


def _embedded(_spec: str, options: HFOptions) -> object:
    return embedded.EmbeddedBackend(options)


def _scripted(spec: str, _options: ModelOptions) -> object:
    from .scripted import ScriptedBackend

    return ScriptedBackend.from_spec(spec)


def _check_scripted(spec: str, _options: ModelOptions) -> None:
    """The whole rules file is read and checked now, so a mistake in it is a usage error before any item."""
    from .scripted import ScriptedBackend

    ScriptedBackend.from_spec(spec).check()


def _served(spec: str, options: OpenAIOptions) -> object:
    from .openai_backend import OpenAIBackend

    return OpenAIBackend(spec, options)


def _check_served(spec: str, _options: OpenAIOptions) -> None:
    """A malformed URL is a usage error now; the server itself is asked on first use."""
    from .openai_backend import parse_spec

    parse_spec(spec)


def _vllm(spec: str, options: VllmOptions) -> object:
    from .vllm_backend import VllmBackend

    return VllmBackend(spec, options)


def _check_vllm(spec: str, options: VllmOptions) -> None:
    """An empty model name or a port that is not a number is a usage error now; the engine starts on first use."""
    from .vllm_backend import VllmBackend

    VllmBackend(spec, options)


def _any(_spec: str) -> bool:
    return True


BUILTIN_BACKENDS: tuple[BackendKind[Any], ...] = (
    BackendKind("transformers", _transformers, hf_options.read, hf_options.OPTIONS, takes=_any),
    BackendKind("embedded", _embedded, hf_options.read, hf_options.OPTIONS, takes=embedded.ALIASES.__contains__),
    BackendKind("scripted", _scripted, common_options, check=_check_scripted),
    BackendKind(openai_options.SCHEME, _served, openai_options.read, openai_options.OPTIONS, check=_check_served),
    BackendKind(vllm_options.SCHEME, _vllm, vllm_options.read, vllm_options.OPTIONS, check=_check_vllm, engine=True),
)
"""In registration order: a hub name or folder (any spec without a scheme), the embedded model's names (a
transformers model too, so with the same options), ``scripted:PATH``, ``openai:URL#NAME`` and ``vllm:MODEL`` (an
engine the session runs)."""
