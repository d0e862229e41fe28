"""Language models through transformers: any hub name or local folder ``from_pretrained`` accepts.

A decoder-only model is :class:`HFModel`; one whose config says ``is_encoder_decoder`` (T5, BART) loads as
:class:`Seq2SeqModel`, which shares everything here but how one batch runs (:mod:`.hf_seq2seq`).

Batching lives here because only the backend knows token lengths: requests are sorted by length,
cut into batches, and the LM head is applied only at the positions that are scored.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import _devices
from .._hub import UNREACHABLE, offline, unreachable_hub
from ..builtin_options import STRATEGIES
from ..errors import ModelLoadError, ModelOutputError, error_line
from . import chat_template, hf_batching, hf_packed, prefix_sharing, scoring
from .hf_seq2seq import EncoderDecoderPaths, decoder_start
from .base import (
    BatchStreaming,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelInfo,
)
from .hf_options import HFOptions
from .hf_shared import SharedPaths, TokenPair

"""A scoring request as tokens: (context kept, continuation, context tokens dropped from the left)."""


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or os.sep in name and name.count(os.sep) > 1


def weights_hash(folder: Path) -> str:
    """sha256 over the weight files of a local folder: the revision of weights that have no commit.

    Hashed once and kept with the files' stamps (:mod:`.fingerprint`), so a rerun with unchanged files reads no weights.
    """
    from .fingerprint import folder_digest

    return folder_digest(folder)


def _cached_commit(repo: str, revision: str | None) -> str | None:
    """The commit of the snapshot the hub files were read from (the revision to record)."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo, "config.json", revision=revision)
    return Path(found).parent.name if isinstance(found, str) else None


def hub_revision(repo: str, revision: str | None) -> str | None:
    """The commit a hub name resolves to from the local cache, or a pinned commit; None if unknown."""
    if revision and len(revision) == 40 and all(c in "0123456789abcdef" for c in revision):
        return revision
    if _looks_like_path(repo):
        return None
    try:
        return _cached_commit(repo, revision)
    except Exception:  # an invalid repo id or unreadable cache: the model load will say what is wrong
        return None


_DTYPE_ALIASES = {"half": "float16", "float": "float32", "double": "float64"}


_CHECKPOINT_DTYPES = frozenset({"float32", "bfloat16", "float16", "float64"})


def config_dtype(value: object) -> str | None:
    """A checkpoint's dtype from its config (``"bfloat16"`` or ``torch.bfloat16``); None when absent or not a float dtype."""
    name = str(value).removeprefix("torch.") if value is not None else None
    return name if name in _CHECKPOINT_DTYPES else None


def declared_config(source: str, revision: str | None = None) -> dict[str, Any] | None:
    """A folder's or cached hub model's ``config.json``, read without transformers (None when absent or unreadable)."""
    folder = Path(source).expanduser()
    if folder.is_dir():
        path: Path | None = folder / "config.json"
    else:
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(source, "config.json", revision=revision)
        except Exception:  # an invalid repo id: loading will say what is wrong
            return None
        path = Path(found) if isinstance(found, str) else None
    try:
        config = json.loads(path.read_text(encoding="utf-8")) if path is not None else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def checkpoint_dtype(source: str, revision: str | None = None) -> str | None:
    """The dtype a folder's or cached hub model's ``config.json`` declares, read without transformers (or None).

    ``dtype`` wins over the older ``torch_dtype``, as in transformers; a hub name not in the local cache is None.
    """
    config = declared_config(source, revision)
    return config_dtype(config.get("dtype") or config.get("torch_dtype")) if config is not None else None


ENCODER_DECODER = "encoder-decoder"
DECODER_ONLY = "decoder-only"


def kind_of(config: Mapping[str, Any] | None) -> str:
    """``encoder-decoder`` for a config that says ``is_encoder_decoder`` (T5, BART, mT5, UL2), else ``decoder-only``."""
    return ENCODER_DECODER if config is not None and bool(config.get("is_encoder_decoder")) else DECODER_ONLY


def kind_variant(kind: str) -> dict[str, str]:
    """The cache-identity entry of a model's kind: empty for decoder-only models, so their keys are what they were."""
    return {"architecture": kind} if kind == ENCODER_DECODER else {}


def resolve_dtype(kind: str, dtype: str, checkpoint: str | None) -> str:
    """The dtype a load uses: an explicit one as asked; ``auto`` is the checkpoint's own dtype on CUDA, float32 elsewhere.

    On a CUDA GPU ``auto`` keeps what the checkpoint was saved in (a float32 checkpoint stays float32, a bfloat16
    one is not widened to twice the memory); a checkpoint that declares none is taken as float32, transformers'
    default. On CPU (and mps) ``auto`` is float32: bfloat16 matmuls there are slow and numerically coarse.
    """
    if dtype != "auto":
        return _DTYPE_ALIASES.get(dtype, dtype)
    return checkpoint if kind == "cuda" and checkpoint is not None else "float32"


def expected_variant(device: str, dtype: str, checkpoint: str | None = None) -> dict[str, str]:
    """The device kind and dtype a load with these options will use: the part of the cache identity that is not the weights.

    Resolves ``auto`` the way loading does (CUDA when a GPU is visible; the dtype by :func:`resolve_dtype` from
    ``checkpoint``, the dtype the model's config declares), so ``auto`` and its explicit equivalent share cache
    entries; the device index does not change answers.
    """
    kind = ("cuda" if _devices.cuda_device_count() else "cpu") if device == "auto" else device.split(":")[0]
    return {"device": kind, "dtype": resolve_dtype(kind, dtype, checkpoint)}


def loaded_variant(model: Any) -> dict[str, str]:
    """The device kind and dtype a loaded model actually has (what its answers were computed with)."""
    parameter = next(model.parameters())
    return {"device": parameter.device.type, "dtype": str(parameter.dtype).removeprefix("torch.")}


def template_variant(choice: str, declared: Callable[[], str | None]) -> dict[str, str]:
    """The cache-identity entry of the chat template a load with ``--holistic-chat-template choice`` applies.

    Empty for raw prompts, so the keys of raw-prompt answers are what they were before templates existed;
    ``declared`` (the tokenizer's own template, read from its files) is only read under ``auto``.
    """
    template = chat_template.pick(choice, declared)
    return template.variant() if template is not None else {}


class HFBackend:
    """A hub name or a local folder, loaded through transformers' ``from_pretrained``.

    The identity of a folder is a hash of its weights (hashed once and kept while its files' stamps hold, so a
    warm run reads no weights), of a hub name the commit it resolves to in the local HF cache; a hub name not in
    the cache has no cheap identity. Its dtype under ``auto`` comes from ``config.json``, as the load decides it;
    the chat template it will apply, from the tokenizer's files (:mod:`.chat_template`).
    """

    def __init__(self, spec: str, options: HFOptions) -> None:
        self.spec = spec
        self.options = options
        self._identity: ModelInfo | None = None

    @property
    def _folder(self) -> Path | None:
        folder = Path(self.spec).expanduser()
        return folder if folder.is_dir() else None

    def identify(self) -> ModelInfo | None:
        if self._identity is None:
            folder = self._folder
            if folder is not None:
                revision: str | None = self.options.revision or weights_hash(folder)
            else:
                revision = hub_revision(self.spec, self.options.revision)
            config = declared_config(self.spec, self.options.revision)  # read once: the dtype and the model's kind
            declared = config_dtype(config.get("dtype") or config.get("torch_dtype")) if config is not None else None
            checkpoint = declared if self.options.dtype == "auto" else None
            variant = expected_variant(self.options.device, self.options.dtype, checkpoint)
            variant.update(kind_variant(kind_of(config)))
            if revision:
                variant.update(template_variant(self.options.chat_template, self._declared_template))
                self._identity = ModelInfo(self.spec, "transformers", revision, variant=variant)
        return self._identity

    def _declared_template(self) -> str | None:
        """The tokenizer's own chat template, read from its files (no weights)."""
        return chat_template.declared(self.spec, self.options.revision, self.options.trust_remote_code)

    def load(self) -> HFModel:
        known = self._identity.revision if self._identity is not None and self._folder is not None else None
        options = self.options
        return HFModel.load(
            self.spec,
            revision=known or options.revision,
            device=options.device,
            dtype=options.dtype,
            trust_remote_code=options.trust_remote_code,
            batch_size=options.batch_size,
        ).apply(options)


def _in_local_cache(repo: str, revision: str | None) -> bool:
    try:
        return _cached_commit(repo, revision) is not None
    except Exception:  # an invalid repo id: loading will say so
        return False


def _check_source(folder: Path, name: str, revision: str | None) -> bool:
    """Refuse what cannot load before transformers tries; True when the load must stay in the local HF cache.

    A folder needs its ``config.json``. A hub name is read from the local cache when the hub cannot be reached,
    and is refused at once when it is not there either.
    """
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise ModelLoadError(f"model folder {name} has no config.json; pass a folder written by save_pretrained()")
        return False
    if offline():
        return False  # huggingface_hub is already offline: it reads the cache only
    endpoint = unreachable_hub()
    if endpoint is None:
        return False
    if not _in_local_cache(name, revision):
        raise ModelLoadError(
            f"model {name!r} is not in the local HF cache and the hub ({endpoint}) cannot be reached; "
            "download it where there is network, or pass a local folder"
        )
    return True


def _load_hint(folder: Path, local_only: bool) -> str:
    """The fix that fits the case: a broken folder, an incomplete cache, or a hub name."""
    if folder.is_dir():
        return "the folder is incomplete or its files are corrupt; write it again with save_pretrained() (model and tokenizer)"
    if os.environ.get(UNREACHABLE):
        return f"the hub ({os.environ[UNREACHABLE]}) cannot be reached and it is not in the local HF cache"
    if offline():
        return "it is not in the local HF cache (HF_HUB_OFFLINE is set)"
    if local_only:
        return "the hub cannot be reached and the local HF cache lacks some of its files; download it where there is network"
    return "check the name (and --holistic-model-revision), or pass a local folder"


TOKENIZER_FILES = "tokenizer.json, vocab.json with merges.txt, vocab.txt, or a sentencepiece tokenizer.model"


def _empty_tokenizer(tokenizer: Any, folder: Path, name: str) -> str | None:
    """Why the tokenizer cannot encode text (no vocabulary beyond its special tokens), or None.

    transformers builds a tokenizer from ``tokenizer_config.json`` or the model type alone when the vocabulary
    files are missing; every prompt would then encode to nothing and fail far from the cause.
    """
    if len(tokenizer) > len(set(tokenizer.all_special_ids)):
        return None
    if folder.is_dir():
        return (
            f"model folder {name} has no tokenizer files ({TOKENIZER_FILES}): its tokenizer has no vocabulary; "
            "save the tokenizer into it with tokenizer.save_pretrained()"
        )
    return f"model {name!r}: its tokenizer has no vocabulary (no {TOKENIZER_FILES}); check the name or the revision"


class HFModel(BatchStreaming):
    """A transformers decoder-only LM held in memory for the whole session (one copy per worker).

    Generation prompts go through a chat template once :meth:`apply` (or :meth:`use_chat_template`) picks one;
    until then, and always for log-likelihood requests, the model sees raw text. An encoder-decoder model loads as
    :class:`Seq2SeqModel`, which changes only how a batch is run.
    """

    kind = DECODER_ONLY
    """What :func:`kind_of` says of the model's config; recorded in the details as ``model_kind``."""

    def __init__(
        self, model: Any, tokenizer: Any, info: ModelInfo, batch_size: int | None = None, strategy: str = "auto"
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.device = next(model.parameters()).device
        # The cache identity of what was loaded, not what was asked for.
        self.info: ModelInfo = info.with_variant(loaded_variant(model))
        config = model.config
        limits = [getattr(config, key, None) for key in ("max_position_embeddings", "n_positions", "n_ctx")]
        self.max_length = min([int(v) for v in limits if isinstance(v, int) and v > 0] or [2048])
        eos = tokenizer.eos_token_id
        self.eos_id: int | None = eos if isinstance(eos, int) else None
        pad = tokenizer.pad_token_id
        self.pad_id: int = pad if isinstance(pad, int) else (self.eos_id if self.eos_id is not None else 0)
        bos = tokenizer.bos_token_id
        self.start_id: int = bos if isinstance(bos, int) else (self.eos_id if self.eos_id is not None else 0)
        self.strategy: scoring.Strategy = self._pick_strategy(strategy)
        self._scorer = scoring.Scorer(model, self.pad_id)
        self._shared = SharedPaths(self, prefix_sharing.PrefixRunner(model, self.pad_id, self._scorer.head_split))
        self.prefix_sharing: str = "auto"
        self._sharing_checked: set[str] = set()  # request kinds whose first shared batch matched the unshared one
        self._packed_checked = False  # packed scoring is checked against full sequences on its first batch
        self.token_budget: int | None = None
        self._memory_share = 0.0
        self.batch_size = max(1, int(batch_size)) if batch_size else self._auto_batch_size()
        # Decoding one token at a time is memory-bound, so generation gains from wider batches (3x at 32 vs 1 on CPU).
        self.generation_batch_size = self.batch_size if batch_size else (256 if self.device.type == "cuda" else 32)
        self.chat_template: chat_template.ChatTemplate | None = None
        self._record(
            {
                "model_kind": self.kind,
                "batch_size": self.batch_size,
                "generation_batch_size": self.generation_batch_size,
                "scoring": self.strategy,
                "deterministic": False,
                "prefix_sharing": self.prefix_sharing,
                **chat_template.details(None),
                **({"token_budget": self.token_budget} if self.token_budget is not None else {}),
            }
        )

    def _record(self, changes: Mapping[str, Any], drop: Iterable[str] = ()) -> None:
        """Hold a new info whose details drop ``drop`` and take ``changes``: a :class:`ModelInfo` is never changed."""
        self.info = self.info.with_details(changes, drop)

    def apply(self, options: HFOptions) -> HFModel:
        """The load-independent options: scoring strategy, chat template, deterministic mode (recorded in the details)."""
        self.use_strategy(options.scoring)
        self.use_prefix_sharing(options.prefix_sharing)
        self.use_chat_template(options.chat_template)
        if options.deterministic:
            import torch

            # TF32 and reduced-precision reductions make float32 matmuls depend on shapes, hence on batching.
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
            torch.backends.cudnn.deterministic = True
        self._record({"deterministic": options.deterministic})
        return self

    def use_strategy(self, asked: str) -> None:
        """Score with ``asked`` (one of ``builtin_options.STRATEGIES``) from now on."""
        if asked not in STRATEGIES:
            raise ModelLoadError(f"unknown scoring strategy {asked!r}; use one of {', '.join(STRATEGIES)}")
        self.strategy = self._pick_strategy(asked)
        self._packed_checked = False
        self._record({"scoring": self.strategy}, drop=("scoring_fallback",))
        if self.prefix_sharing != "off" and "prefix_sharing_method" in self.info.details:
            self._record({"prefix_sharing_method": self._sharing_method()})

    def use_prefix_sharing(self, mode: str) -> None:
        """Share token prefixes across requests: ``auto`` (on CPU, when it saves work, after a first check), ``on`` or ``off``."""
        if mode not in ("auto", "on", "off"):
            raise ModelLoadError(f"unknown prefix sharing mode {mode!r}; use auto, on or off")
        self.prefix_sharing = mode
        self._sharing_checked.clear()
        self._record({"prefix_sharing": mode}, drop=("prefix_sharing_fallback", "prefix_sharing_method"))
        if mode != "off":
            reason = prefix_sharing.sharable(self.model)
            if reason is not None:
                self._sharing_unavailable(reason)
                return
            self._record({"prefix_sharing_method": self._sharing_method()})

    def _splices(self) -> bool:
        """Whether requests computed outside packed rows share prefixes by splicing their keys and values into each
        row: under ``on``, and under ``auto`` on CPU only. On an H200 (random-weight 1.7B Llama, bfloat16) the splice
        made the core suite at -n 4 slower (239 s of model time against 206 s) and BoolQ + IMDB at -n 0 too (11.2 s
        against 4.5 s): prefill is cheap there, copying a prefix's cache into every row is not."""
        return self.prefix_sharing == "on" or (self.prefix_sharing == "auto" and self.device.type != "cuda")

    def _sharing_method(self) -> str:
        """How prefixes are shared, for the details: inside packed passes, by splicing caches, or both."""
        if self.strategy == "packed" and self.prefix_sharing == "on":
            return "log-likelihood and greedy generation inside packed passes"
        inside = "log-likelihood inside packed passes" if self.strategy == "packed" else ""
        spliced = "a spliced key/value cache" if self._splices() else ""
        if inside and spliced:
            return f"{inside}; generation from {spliced}"
        if inside:
            return f"{inside}; generation whole (auto on a GPU: on shares it inside packed passes too)"
        return spliced or "none under auto on a GPU with this scoring strategy (use on, or --holistic-scoring packed)"

    def _sharing_unavailable(self, reason: str) -> None:
        """Compute every request whole from now on, and say why in the model details."""
        self._record({"prefix_sharing_fallback": f"prefix sharing unavailable: {reason}"})
        self.prefix_sharing = "off"

    def use_chat_template(self, choice: str) -> None:
        """Render generation prompts through ``choice`` (auto, none or a Jinja file's path) from now on.

        ``auto`` is the tokenizer's own template, or raw prompts when it has none. The template is rendered once
        here, so a broken one is a load error; it joins the cache identity (``variant``) only when applied,
        and must be what :meth:`HFBackend.identify` predicted from the tokenizer's files.
        """
        template = chat_template.pick(choice, self._tokenizer_template)
        if template is not None:
            chat_template.check_renders(self.tokenizer, template)
        self.chat_template = template
        self._record(chat_template.details(template))
        self.info = self.info.with_variant(template.variant() if template is not None else {}, drop=("chat_template",))

    def _tokenizer_template(self) -> str | None:
        """The loaded tokenizer's own template (its ``default`` when it names several)."""
        return chat_template.default_of(getattr(self.tokenizer, "chat_template", None))

    def prompt_text(self, prompt: str) -> str:
        """The text a generation prompt feeds the model: as given, or one user turn through the chat template."""
        if self.chat_template is None:
            return prompt
        return chat_template.render_or_fail(self.tokenizer, self.chat_template, prompt)

    def _pick_strategy(self, asked: str) -> scoring.Strategy:
        """``auto``: shared contexts on CPU (measured fastest there), packed rows on a GPU (one pass, context once)."""
        if asked != "auto":
            return asked  # type: ignore[return-value]
        return "packed" if self.device.type == "cuda" else "shared"

    def _auto_batch_size(self) -> int:
        """8 contexts on CPU (measured best there); on a GPU, as many as this worker's share of memory holds.

        On a GPU the limit is a token budget (padded tokens per forward pass) rather than a row count: this
        process's share of the device memory (free memory split between the xdist workers that share the GPU,
        each of which holds its own copy of the weights) divided by what one token costs: its activations
        (hidden and MLP states, a few times over), its keys/values, and float32 log-probabilities over the
        vocabulary for the positions scored. An estimate: packed scoring measures a token's cost on its second
        batch and sets the budget from that (:mod:`.hf_packed`), and out-of-memory errors still halve the batch.
        """
        if self.device.type != "cuda":
            return 8
        import torch

        config = self.model.config
        layers = int(getattr(config, "num_hidden_layers", getattr(config, "n_layer", 24)))
        hidden = int(getattr(config, "hidden_size", getattr(config, "n_embd", 2048)))
        inner = int(getattr(config, "intermediate_size", None) or getattr(config, "n_inner", None) or 4 * hidden)
        vocab = int(getattr(config, "vocab_size", 50_000))
        element = torch.finfo(next(self.model.parameters()).dtype).bits // 8
        per_token = element * (8 * hidden + 3 * inner + 2 * layers * hidden) + vocab * 4 * 3
        free, total = torch.cuda.mem_get_info(self.device)
        weights = sum(p.numel() * p.element_size() for p in self.model.parameters())
        sharers = _devices.sharing_workers()
        # Workers that have not loaded yet will take their weights from what is free now.
        self._memory_share = min(free, total * 0.9 - sharers * weights) / sharers
        self.token_budget = int(max(2048, self._memory_share * 0.6 // per_token))
        return 1024

    def memory_share(self) -> float:
        """This worker's share of the device memory for activations, as the load found it (bytes; 0 on CPU)."""
        return self._memory_share

    @classmethod
    def load(
        cls,
        name_or_path: str,
        *,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        trust_remote_code: bool = False,
        batch_size: int | None = None,
        display_name: str | None = None,
    ) -> HFModel:
        """Load by hub name (from the local HF cache when offline) or from a local folder, straight onto ``device``.

        ``dtype="auto"`` is the checkpoint's own dtype on a CUDA GPU and float32 elsewhere (:func:`resolve_dtype`).
        """
        folder = Path(name_or_path).expanduser()
        if not folder.is_dir() and (folder.exists() or _looks_like_path(name_or_path)):
            raise ModelLoadError(
                f"model folder {name_or_path!r} does not exist or is not a folder; "
                "pass --model with a folder written by save_pretrained() or a hub name such as gpt2"
            )
        target = str(folder) if folder.is_dir() else name_or_path
        local_only = _check_source(folder, name_or_path, revision)
        import torch
        import transformers

        torch_device = torch.device(
            "cuda" if device == "auto" and torch.cuda.is_available() else ("cpu" if device == "auto" else device)
        )
        if dtype != "auto" and not isinstance(getattr(torch, dtype, None), torch.dtype):
            raise ModelLoadError(f"unknown dtype {dtype!r}; use auto, float32, bfloat16 or float16")
        started = time.perf_counter()
        common = {"revision": revision, "trust_remote_code": trust_remote_code, "local_files_only": local_only}
        failure: str | None = None
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(target, **common)
            failure = _empty_tokenizer(tokenizer, folder, name_or_path)
        except Exception as error:  # transformers raises OSError, ValueError, EnvironmentError...
            failure = f"could not load model {name_or_path!r}: {error_line(error)}; {_load_hint(folder, local_only)}"
        if failure is not None:  # before the weights load; raised outside the except block (no chained error)
            raise ModelLoadError(failure)
        try:
            config = transformers.AutoConfig.from_pretrained(target, **common)
            checkpoint = config_dtype(getattr(config, "dtype", None))  # what expected_variant read from config.json
            torch_dtype = getattr(torch, resolve_dtype(torch_device.type, dtype, checkpoint))
            # Straight onto the device: a GPU load never holds the whole model in CPU memory first (on CPU it is as fast).
            encoder_decoder = bool(getattr(config, "is_encoder_decoder", False))
            auto_class = transformers.AutoModelForSeq2SeqLM if encoder_decoder else transformers.AutoModelForCausalLM
            model = auto_class.from_pretrained(target, config=config, dtype=torch_dtype, device_map={"": torch_device}, **common)
        except Exception as error:  # transformers raises OSError, ValueError, EnvironmentError...
            failure = f"could not load model {name_or_path!r}: {error_line(error)}; {_load_hint(folder, local_only)}"
        if failure is not None:  # raised outside the except block, so the message is not chained to transformers' error
            raise ModelLoadError(failure)
        model.eval()
        if folder.is_dir():
            revision = revision or weights_hash(folder)
        else:
            revision = _cached_commit(name_or_path, revision) or getattr(model.config, "_commit_hash", None) or revision
        info = ModelInfo(
            name=display_name or name_or_path,
            backend="transformers",
            revision=revision,
            details={
                "source": target,
                "architecture": type(model).__name__,
                "parameters": sum(p.numel() for p in model.parameters()),
                "dtype": str(torch_dtype).removeprefix("torch."),
                "device": str(torch_device),
                "load_seconds": round(time.perf_counter() - started, 3),
                "trust_remote_code": trust_remote_code,
            },
        )
        if encoder_decoder:
            return Seq2SeqModel(model, tokenizer, info, batch_size)
        return cls(model, tokenizer, info, batch_size)

    def _pad(self, rows: Sequence[Sequence[int]], *, left: bool, width: int | None = None) -> tuple[Any, Any]:
        return scoring.pad(rows, self.pad_id, left=left, width=width)

    def _encode(self, text: str) -> list[int]:
        """Tokens of ``text`` with no special tokens added: a rendered chat template already holds its own BOS."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _encode_all(self, texts: Iterable[str]) -> dict[str, list[int]]:
        """The distinct ``texts``' tokens from one tokenizer call (a fast tokenizer encodes a list in one go, where a
        call per text costs tens of microseconds each: a thousand four-choice instances make eight thousand)."""
        distinct = list(dict.fromkeys(texts))
        if not distinct:
            return {}
        return {text: list(ids) for text, ids in zip(distinct, self.tokenizer(distinct, add_special_tokens=False)["input_ids"])}

    # -- log-likelihood ----------------------------------------------------------------------------

    def loglikelihood_batches(self, requests: Sequence[LoglikelihoodRequest]) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        """Results one batch at a time, so a cache can keep each batch the moment it is done.

        Contexts and continuations are scored as raw text, never through the chat template: the multiple-choice,
        calibration, ranking and language-modelling methods compare the probabilities of texts, as HELM does.
        Requests that share a context are scored together (the context is run once). Contexts are sorted by
        length and cut into batches of at most ``batch_size`` contexts and, when set, ``token_budget`` padded
        tokens. A batch that runs out of device memory is retried at half the size, and the smaller size is
        kept for the rest of the session, so no request fails for want of memory while one context fits.
        """
        encoded = self._encode_all(text for request in requests for text in (request.context, request.continuation))
        pairs = [self._pair(request, encoded) for request in requests]
        indices = list(range(len(requests)))
        if self.strategy == "packed":
            reason = prefix_sharing.sharable(self.model)  # a 4-D mask replaces what a sliding window would apply
            if reason is None:
                yield from hf_packed.loglikelihood(self, requests, pairs, indices)
                return
            self._fall_back(reason)
        if self._splices():
            shared = self._shared.loglikelihood(requests, pairs)
            if shared is not None:
                yield from shared
                return
        yield from self._plain_loglikelihood(requests, pairs, indices)

    def _plain_loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], pairs: list[TokenPair], indices: Sequence[int]
    ) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        """The requests at ``indices``, each context computed whole (once for all the continuations that share it)."""
        groups, contexts = hf_batching.contexts_longest_first(pairs, indices)

        def score(batch: list[tuple[int, ...]]) -> tuple[scoring.Scores, list[int], float]:
            started = time.perf_counter()
            scores, members = self._score_batch(batch, groups, pairs)
            return scores, members, (time.perf_counter() - started) / len(members)

        batches = hf_batching.halving_batches(
            len(contexts), lambda start: self._next_batch(contexts, start, groups, pairs), score, self._shrink
        )
        for _, (scores, members, elapsed) in batches:
            yield self._loglikelihood_results(requests, pairs, members, scores, elapsed)

    def _loglikelihood_results(
        self,
        requests: Sequence[LoglikelihoodRequest],
        pairs: list[TokenPair],
        members: Sequence[int],
        scores: scoring.Scores,
        elapsed: float,
    ) -> list[tuple[int, LoglikelihoodResult]]:
        """One batch's results in request terms; a NaN log-probability is the batch's error (broken weights)."""
        results = []
        for index, logprob, greedy in zip(members, scores.logprobs, scores.greedy):
            context, continuation, dropped = pairs[index]
            if math.isnan(logprob):
                raise ModelOutputError(
                    f"model {self.info.name!r} returned a NaN log-probability for {requests[index].continuation!r}; "
                    "its weights or dtype are broken (try --holistic-dtype float32)"
                )
            tokens_in = len(context) + len(continuation)
            results.append(
                (index, LoglikelihoodResult(logprob, greedy, tokens_in, len(continuation), elapsed, truncated_tokens=dropped))
            )
        return results

    def _next_batch(
        self, contexts: list[tuple[int, ...]], start: int, groups: dict[tuple[int, ...], list[int]], pairs: list[TokenPair]
    ) -> list[tuple[int, ...]]:
        """The contexts of the next batch: at most ``batch_size`` of them and ``token_budget`` padded tokens (at least one).

        (:func:`.hf_batching.next_batch`: the longest run that fits, found by bisection.)
        """

        def size(chosen: Sequence[tuple[int, ...]]) -> int:
            members = [(row, len(pairs[i][1])) for row, c in enumerate(chosen) for i in groups[c]]
            return scoring.padded_tokens(self.strategy, [len(c) for c in chosen], members)

        return hf_batching.next_batch(contexts, start, self.batch_size, self.token_budget, size)

    def _score_batch(
        self, batch: list[tuple[int, ...]], groups: dict[tuple[int, ...], list[int]], pairs: list[TokenPair]
    ) -> tuple[scoring.Scores, list[int]]:
        """Score one batch with the chosen strategy; falls back to ``full`` where the architecture cannot do it."""
        members = [i for c in batch for i in groups[c]]
        request = scoring.ScoreBatch(batch, [scoring.Member(row, pairs[i][1]) for row, c in enumerate(batch) for i in groups[c]])
        if self.strategy == "shared":
            try:
                return self._scorer.score("shared", request), members
            except (AttributeError, NotImplementedError, TypeError):
                self._fall_back("its key/value cache cannot be re-indexed")
        return self._scorer.score(self.strategy, request), members

    def _fall_back(self, reason: str) -> None:
        """Score one full sequence per request from now on (always correct), and say why in the model details."""
        self._record({"scoring": "full", "scoring_fallback": f"{self.strategy} scoring unavailable: {reason}"})
        self.strategy = "full"
        if "prefix_sharing_method" in self.info.details:
            self._record({"prefix_sharing_method": self._sharing_method()})

    def _shrink(self, size: int, error: BaseException) -> None:
        """Halve the scoring batch (contexts and token budget) after running out of device memory."""
        self.batch_size = self._halved(size, error, "context", "use a shorter context")
        if self.token_budget is not None:
            self.token_budget = max(1, self.token_budget // 2)
        self._record({"batch_size": self.batch_size})

    def _halved(self, size: int, error: BaseException, unit: str, fix: str) -> int:
        """The batch size to retry with after an out-of-memory error (kept for the session, counted in the details).

        A batch of one that does not fit is the request's error: nothing smaller can be tried (:func:`.hf_batching.halved`).
        """
        smaller = hf_batching.halved(size, error, model=self.info.name, unit=unit, fix=fix)
        self._record({"out_of_memory_retries": int(self.info.details.get("out_of_memory_retries", 0)) + 1})
        return smaller

    def _pair(self, request: LoglikelihoodRequest, encoded: Mapping[str, list[int]] | None = None) -> tuple[list[int], list[int], int]:
        """(context, continuation, tokens dropped): the context is cut from the left, as HELM does, so the pair fits.

        An empty context, or one that opens a text (``request.text_start``), starts with the start token, as HELM's
        language-modelling window does; cut from the left, it loses that token first. ``encoded``: texts already
        encoded (:meth:`_encode_all`).
        """
        context = list(encoded[request.context]) if encoded else self._encode(request.context)
        if request.text_start or not context:
            context = [self.start_id, *context]
        continuation = self._continuation_tokens(request, encoded)
        keep = self.max_length + 1 - len(continuation)  # the last continuation token is scored, never fed
        return context[-keep:], continuation, max(0, len(context) - keep)

    def _continuation_tokens(self, request: LoglikelihoodRequest, encoded: Mapping[str, list[int]] | None = None) -> list[int]:
        """The continuation's tokens (no special tokens): some, and fewer than the model's window."""
        continuation = list(encoded[request.continuation]) if encoded else self._encode(request.continuation)
        if not continuation:
            raise ModelOutputError(f"continuation {request.continuation!r} encodes to no tokens; give each choice some text")
        if len(continuation) >= self.max_length:
            shown = request.continuation if len(request.continuation) <= 40 else request.continuation[:37] + "..."
            raise ModelOutputError(
                f"continuation {shown!r} is {len(continuation)} tokens, which does not fit the model's "
                f"{self.max_length}-token window"
            )
        return continuation

    # -- generation --------------------------------------------------------------------------------

    def generate_batches(self, requests: Sequence[GenerationRequest]) -> Iterator[list[tuple[int, GenerationResult]]]:
        """Greedy generation in left-padded batches of similar prompt length, one batch at a time.

        Each prompt is first rendered through the chat template when one applies (:meth:`prompt_text`: one user
        message, the assistant's turn opened), then encoded without adding special tokens, so ``tokens_in``
        counts the rendered text. Prompt and answer must fit the window: the prompt is cut from the left (as HELM
        does) to leave room for ``max_tokens``, which is itself capped at one token less than the window.
        """
        for (max_tokens, stop, temperature, seed), indices in hf_batching.generation_groups(requests).items():
            budget = min(max_tokens, self.max_length - 1)
            encoded = {i: self._encode(self.prompt_text(requests[i].prompt)) or [self.start_id] for i in indices}
            prompts = {i: tokens[-(self.max_length - budget) :] for i, tokens in encoded.items()}
            # Packed rows decode from the decoder's states through the LM head, which must split off the model.
            if temperature == 0 and self.strategy == "packed" and self.prefix_sharing == "on" and self._scorer.head_split():
                done: set[int] = set()
                for batch in hf_packed.generation(self, indices, prompts, budget, stop):
                    done.update(i for i, _ in batch)
                    yield [(i, replace(r, truncated_tokens=len(encoded[i]) - len(prompts[i]))) for i, r in batch]
                rest = [i for i in indices if i not in done]
                if rest:
                    yield from self._plain_generation(rest, prompts, encoded, budget, stop, temperature, seed)
                continue
            if self._splices() and temperature == 0:
                shared = self._shared.generation(indices, prompts, budget, stop)
                if shared is not None:
                    for batch in shared:
                        yield [(i, replace(r, truncated_tokens=len(encoded[i]) - len(prompts[i]))) for i, r in batch]
                    continue
            yield from self._plain_generation(indices, prompts, encoded, budget, stop, temperature, seed)

    def _plain_generation(
        self,
        indices: Sequence[int],
        prompts: dict[int, list[int]],
        encoded: dict[int, list[int]],
        budget: int,
        stop: tuple[str, ...],
        temperature: float,
        seed: int,
    ) -> Iterator[list[tuple[int, GenerationResult]]]:
        """The prompts at ``indices`` through ``generate``, each computed whole, in batches of similar length."""
        order = hf_batching.longest_first(indices, lambda i: len(prompts[i]))

        def shrink(size: int, error: BaseException) -> None:
            self.generation_batch_size = self._halved(size, error, "prompt", "lower max_tokens")
            self._record({"generation_batch_size": self.generation_batch_size})

        batches = hf_batching.halving_batches(
            len(order),
            lambda start: order[start : start + self.generation_batch_size],
            lambda batch: self._generate_batch([prompts[i] for i in batch], budget, stop, temperature, seed),
            shrink,
        )
        for batch, results in batches:
            yield [(i, replace(r, truncated_tokens=len(encoded[i]) - len(prompts[i]))) for i, r in zip(batch, results)]

    def _generate_batch(
        self, prompts: list[list[int]], max_tokens: int, stop: tuple[str, ...], temperature: float, seed: int
    ) -> list[GenerationResult]:
        import torch
        import transformers

        started = time.perf_counter()
        ids, mask, width = self._prompt_batch(prompts)
        config = transformers.GenerationConfig(  # type: ignore[no-untyped-call]  # transformers' __init__ is untyped
            max_new_tokens=max_tokens,
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else None,
            top_p=None,
            top_k=None,
            pad_token_id=self.pad_id,
            eos_token_id=self.eos_id,
            output_logits=True,
            return_dict_in_generate=True,
            stop_strings=[s for s in stop if s] or None,
            **self._generation_settings(),
        )
        if temperature > 0:
            torch.manual_seed(seed)
        with torch.inference_mode():
            output = self.model.generate(
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                generation_config=config,
                tokenizer=self.tokenizer,
            )
        chosen = output.sequences[:, width:]
        # The chosen tokens' log-probabilities, step by step on the device (never the whole vocabulary at once),
        # and one transfer to the host for the batch.
        steps = []
        for step, logits in enumerate(output.logits):
            table = logits.float()
            steps.append(table.gather(1, chosen[:, step : step + 1]).squeeze(1) - torch.logsumexp(table, dim=-1))
        new_tokens = chosen.tolist()
        step_logprobs = torch.stack(steps, dim=1).cpu().tolist() if steps else [[] for _ in prompts]
        elapsed = (time.perf_counter() - started) / len(prompts)
        return self.generation_results([len(p) for p in prompts], new_tokens, step_logprobs, stop, elapsed)

    def _prompt_batch(self, prompts: list[list[int]]) -> tuple[Any, Any, int]:
        """(ids, mask, where the new tokens start in ``generate``'s output): prompts left-padded, so answers line up."""
        ids, mask = self._pad(prompts, left=True)
        return ids, mask, int(ids.shape[1])

    def _generation_settings(self) -> dict[str, Any]:
        """``GenerationConfig`` settings a kind of model adds (none for a decoder-only one)."""
        return {}

    def generation_results(
        self,
        prompt_lengths: Sequence[int],
        new_tokens: Sequence[list[int]],
        step_logprobs: Sequence[list[float]],
        stop: tuple[str, ...],
        elapsed: float,
    ) -> list[GenerationResult]:
        """Texts cut at the end token and the first stop sequence, with the log-probabilities of the tokens kept
        (:func:`.hf_batching.generation_results`)."""
        return hf_batching.generation_results(
            prompt_lengths, new_tokens, step_logprobs, stop, elapsed, eos_id=self.eos_id, decode=self._decode, model=self.info.name
        )

    def _decode(self, tokens: list[int]) -> str:
        """The text of generated tokens, special tokens left out."""
        return str(self.tokenizer.decode(tokens, skip_special_tokens=True))


class Seq2SeqModel(EncoderDecoderPaths, HFModel):
    """An encoder-decoder model held in memory for the session: the prompt to the encoder, the answer from the decoder
    (:mod:`.hf_seq2seq`); batching, halving, stop cutting, templates and details are :class:`HFModel`'s."""

    kind = ENCODER_DECODER

    def __init__(
        self, model: Any, tokenizer: Any, info: ModelInfo, batch_size: int | None = None, strategy: str = "auto"
    ) -> None:
        self.decoder_start_id = decoder_start(model, info.name)
        super().__init__(model, tokenizer, info, batch_size, strategy)
        self.info = self.info.with_variant(kind_variant(self.kind))
        self._record({"scoring": "encoder once per context"})
