"""Causal language models through transformers: any hub name or local folder ``from_pretrained`` accepts.

Batching lives here because only the backend knows token lengths: requests are sorted by length,
cut into batches, and the LM head is applied only at the positions that are scored.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import _devices
from .._hub import UNREACHABLE, offline, unreachable_hub
from ..errors import ModelLoadError, ModelOutputError
from .base import (
    BatchStreaming,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelInfo,
    ModelOptions,
)

_Pair = tuple[list[int], list[int], int]
"""A scoring request as tokens: (context kept, continuation, context tokens dropped from the left)."""


def _chunks(items: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or os.sep in name and name.count(os.sep) > 1


def weights_hash(folder: Path) -> str:
    """sha256 over the weight files of a local folder: the revision of weights that have no commit."""
    digest = hashlib.sha256()
    files = sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin", ".pt", ".gguf") or p.name == "config.json")
    for path in files:
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()[:16]


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


def expected_variant(device: str, dtype: str) -> dict[str, str]:
    """The device kind and dtype a load with these options will use: the part of the cache identity that is not the weights.

    Resolves ``auto`` the way loading does (CUDA when a GPU is visible, bfloat16 there and float32 elsewhere),
    so ``auto`` and its explicit equivalent share cache entries; the device index does not change answers.
    """
    kind = ("cuda" if _devices.cuda_device_count() else "cpu") if device == "auto" else device.split(":")[0]
    if dtype == "auto":
        return {"device": kind, "dtype": "bfloat16" if kind == "cuda" else "float32"}
    return {"device": kind, "dtype": _DTYPE_ALIASES.get(dtype, dtype)}


def loaded_variant(model: Any) -> dict[str, str]:
    """The device kind and dtype a loaded model actually has (what its answers were computed with)."""
    parameter = next(model.parameters())
    return {"device": parameter.device.type, "dtype": str(parameter.dtype).removeprefix("torch.")}


class HFBackend:
    """A hub name or a local folder, loaded through transformers' ``from_pretrained``.

    The identity of a folder is a hash of its weights (computed once per process), of a hub name the
    commit it resolves to in the local HF cache; a hub name not in the cache has no cheap identity.
    """

    def __init__(self, spec: str, options: ModelOptions) -> None:
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
            variant = expected_variant(self.options.device, self.options.dtype)
            self._identity = ModelInfo(self.spec, "transformers", revision, variant=variant) if revision else None
        return self._identity

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
        )


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


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class HFModel(BatchStreaming):
    """A transformers causal LM held in memory for the whole session (one copy per worker)."""

    def __init__(self, model: Any, tokenizer: Any, info: ModelInfo, batch_size: int | None = None) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.info = info
        self.device = next(model.parameters()).device
        info.variant.update(loaded_variant(model))  # the cache identity of what was loaded, not what was asked for
        self.shared_context = True
        config = model.config
        limits = [getattr(config, key, None) for key in ("max_position_embeddings", "n_positions", "n_ctx")]
        self.max_length = min([int(v) for v in limits if isinstance(v, int) and v > 0] or [2048])
        eos = tokenizer.eos_token_id
        self.eos_id: int | None = eos if isinstance(eos, int) else None
        pad = tokenizer.pad_token_id
        self.pad_id: int = pad if isinstance(pad, int) else (self.eos_id if self.eos_id is not None else 0)
        bos = tokenizer.bos_token_id
        self.start_id: int = bos if isinstance(bos, int) else (self.eos_id if self.eos_id is not None else 0)
        self.batch_size = max(1, int(batch_size)) if batch_size else self._auto_batch_size()
        # Decoding one token at a time is memory-bound, so generation gains from wider batches (3x at 32 vs 1 on CPU).
        self.generation_batch_size = self.batch_size if batch_size else max(32, self.batch_size)
        info.details["batch_size"] = self.batch_size
        info.details["generation_batch_size"] = self.generation_batch_size

    def _auto_batch_size(self) -> int:
        """8 on CPU (measured best for shared-context scoring); on GPU, what half the free memory holds.

        A row costs its keys/values (2 x layers x hidden per token) plus its log-softmax over the
        vocabulary at the scored positions; 512-token rows and 32 scored positions are assumed.
        """
        if self.device.type != "cuda":
            return 8
        import torch

        config = self.model.config
        layers = int(getattr(config, "num_hidden_layers", getattr(config, "n_layer", 24)))
        hidden = int(getattr(config, "hidden_size", getattr(config, "n_embd", 2048)))
        vocab = int(getattr(config, "vocab_size", 50_000))
        element = torch.finfo(next(self.model.parameters()).dtype).bits // 8
        per_row = 512 * (2 * layers * hidden * element + 8 * hidden * element) + 32 * vocab * 4 * 2
        free, _ = torch.cuda.mem_get_info(self.device)
        return int(max(1, min(256, free * 0.5 // per_row)))

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
        """Load by hub name (from the local HF cache when offline) or from a local folder."""
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
        if dtype == "auto":
            torch_dtype = torch.bfloat16 if torch_device.type == "cuda" and torch.cuda.is_bf16_supported() else torch.float32
        else:
            torch_dtype = getattr(torch, dtype, None)
            if not isinstance(torch_dtype, torch.dtype):
                raise ModelLoadError(f"unknown dtype {dtype!r}; use auto, float32, bfloat16 or float16")
        started = time.perf_counter()
        common = {"revision": revision, "trust_remote_code": trust_remote_code, "local_files_only": local_only}
        failure: str | None = None
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(target, **common)
            model = transformers.AutoModelForCausalLM.from_pretrained(target, dtype=torch_dtype, **common)
        except Exception as error:  # transformers raises OSError, ValueError, EnvironmentError...
            failure = f"could not load model {name_or_path!r}: {_first_line(error)}; {_load_hint(folder, local_only)}"
        if failure is not None:  # raised outside the except block, so the message is not chained to transformers' error
            raise ModelLoadError(failure)
        model.to(torch_device).eval()
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
        return cls(model, tokenizer, info, batch_size)

    def _pad(self, rows: Sequence[Sequence[int]], *, left: bool, width: int | None = None) -> tuple[Any, Any]:
        """Token rows as (ids, attention mask): left-padded for prompts and contexts, right-padded otherwise."""
        import torch

        width = width if width is not None else max(len(row) for row in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            if row:
                span = slice(width - len(row), width) if left else slice(0, len(row))
                ids[r, span] = torch.tensor(list(row))
                mask[r, span] = 1
        return ids, mask

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # -- log-likelihood ----------------------------------------------------------------------------

    def loglikelihood_batches(self, requests: Sequence[LoglikelihoodRequest]) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        """Results one batch at a time, so a cache can keep each batch the moment it is done.

        Requests that share a context are scored together: the context is encoded once and every
        continuation is scored from its cached keys/values. Contexts are sorted by length and up to
        ``batch_size`` of them go through the model at once.
        """
        pairs = [self._pair(request) for request in requests]
        groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
        for index, (context, _, _) in enumerate(pairs):
            groups[tuple(context)].append(index)
        contexts = sorted(groups, key=lambda c: (-(len(c) + max(len(pairs[i][1]) for i in groups[c])), groups[c][0]))
        for start in range(0, len(contexts), self.batch_size):
            batch = contexts[start : start + self.batch_size]
            members = [(c, i) for c in batch for i in groups[c]]
            if self.shared_context:
                try:
                    yield self._score_shared(batch, members, pairs, requests)
                    continue
                except (AttributeError, NotImplementedError, TypeError):
                    self.shared_context = False  # this architecture's cache cannot be re-indexed
            yield from self._score_plain([i for _, i in members], pairs, requests)

    def _pair(self, request: LoglikelihoodRequest) -> tuple[list[int], list[int], int]:
        """(context, continuation, tokens dropped): the context is cut from the left, as HELM does, so the pair fits."""
        context = self._encode(request.context) or [self.start_id]
        continuation = self._encode(request.continuation)
        if not continuation:
            raise ModelOutputError(f"continuation {request.continuation!r} encodes to no tokens; give each choice some text")
        if len(continuation) >= self.max_length:
            shown = request.continuation if len(request.continuation) <= 40 else request.continuation[:37] + "..."
            raise ModelOutputError(
                f"continuation {shown!r} is {len(continuation)} tokens, which does not fit the model's "
                f"{self.max_length}-token window"
            )
        keep = self.max_length + 1 - len(continuation)  # the last continuation token is scored, never fed
        return context[-keep:], continuation, max(0, len(context) - keep)

    def _score_shared(
        self,
        contexts: list[tuple[int, ...]],
        members: list[tuple[tuple[int, ...], int]],
        pairs: list[_Pair],
        requests: Sequence[LoglikelihoodRequest],
    ) -> list[tuple[int, LoglikelihoodResult]]:
        import torch

        started = time.perf_counter()
        ids, mask = self._pad(contexts, left=True)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        row_of_context = {context: row for row, context in enumerate(contexts)}
        rows = torch.tensor([row_of_context[c] for c, _ in members])
        continuations = [pairs[i][1] for _, i in members]
        longest = max(len(c) for c in continuations)
        with torch.inference_mode():
            device = self.device
            first = self.model(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                position_ids=positions.to(device),
                use_cache=True,
                logits_to_keep=1,
            )
            first_logprobs = torch.log_softmax(first.logits[:, -1].float(), dim=-1)[rows.to(device)]
            rest_logprobs = None
            if longest > 1:
                cache = first.past_key_values
                cache.reorder_cache(rows.to(device))
                tail_ids, tail_mask = self._pad(
                    [continuation[:-1] for continuation in continuations], left=False, width=longest - 1
                )
                context_lengths = mask.sum(-1)[rows]
                # Padding after a shorter continuation would run past the window (learned positions raise): park it at 0.
                tail_positions = (context_lengths[:, None] + torch.arange(longest - 1)[None, :]).masked_fill(tail_mask == 0, 0)
                second = self.model(
                    input_ids=tail_ids.to(device),
                    attention_mask=torch.cat([mask[rows], tail_mask], dim=-1).to(device),
                    position_ids=tail_positions.to(device),
                    past_key_values=cache,
                    use_cache=True,
                )
                rest_logprobs = torch.log_softmax(second.logits.float(), dim=-1)
        elapsed = (time.perf_counter() - started) / len(members)
        results = []
        for r, (context, index) in enumerate(members):
            continuation = continuations[r]
            target = torch.tensor(continuation, device=first_logprobs.device)
            steps = [first_logprobs[r]]
            if len(continuation) > 1 and rest_logprobs is not None:
                steps.extend(rest_logprobs[r, : len(continuation) - 1])
            table = torch.stack(steps)
            tokens_in = len(context) + len(continuation)
            results.append((index, self._result(table, target, requests[index], tokens_in, elapsed, pairs[index][2])))
        return results

    def _score_plain(
        self, indices: list[int], pairs: list[_Pair], requests: Sequence[LoglikelihoodRequest]
    ) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        """One padded sequence per request; for architectures whose cache cannot be shared."""
        import torch

        order = sorted(indices, key=lambda i: (-(len(pairs[i][0]) + len(pairs[i][1])), i))
        for batch in _chunks(order, self.batch_size):
            started = time.perf_counter()
            ids, mask = self._pad([pairs[i][0] + pairs[i][1][:-1] for i in batch], left=False)
            wanted = sorted({p for i in batch for p in range(len(pairs[i][0]) - 1, len(pairs[i][0]) - 1 + len(pairs[i][1]))})
            with torch.inference_mode():
                logits = self._logits(ids.to(self.device), mask.to(self.device), wanted)
            column = {position: k for k, position in enumerate(wanted)}
            elapsed = (time.perf_counter() - started) / len(batch)
            results = []
            for r, i in enumerate(batch):
                context, continuation, dropped = pairs[i]
                cols = [column[p] for p in range(len(context) - 1, len(context) - 1 + len(continuation))]
                table = torch.log_softmax(logits[r, cols].float(), dim=-1)
                target = torch.tensor(continuation, device=table.device)
                results.append((i, self._result(table, target, requests[i], len(context) + len(continuation), elapsed, dropped)))
            yield results

    def _result(
        self, table: Any, target: Any, request: LoglikelihoodRequest, tokens_in: int, seconds: float, dropped: int
    ) -> LoglikelihoodResult:
        """Sum the log-probabilities of ``target`` in ``table`` (one row per continuation token)."""
        logprob = float(table.gather(-1, target[:, None]).sum())
        if math.isnan(logprob):
            raise ModelOutputError(
                f"model {self.info.name!r} returned a NaN log-probability for {request.continuation!r}; "
                "its weights or dtype are broken (try --holistic-dtype float32)"
            )
        greedy = bool((table.argmax(-1) == target).all())
        return LoglikelihoodResult(logprob, greedy, tokens_in, int(target.numel()), seconds, truncated_tokens=dropped)

    def _logits(self, ids: Any, mask: Any, positions: list[int]) -> Any:
        """Logits at ``positions`` only: the LM head is a large share of a small model's compute."""
        import torch

        keep = torch.tensor(positions, device=ids.device)
        try:
            return self.model(input_ids=ids, attention_mask=mask, logits_to_keep=keep).logits
        except TypeError:  # an architecture without logits_to_keep: full logits, then select
            return self.model(input_ids=ids, attention_mask=mask).logits[:, keep]

    # -- generation --------------------------------------------------------------------------------

    def generate_batches(self, requests: Sequence[GenerationRequest]) -> Iterator[list[tuple[int, GenerationResult]]]:
        """Greedy generation in left-padded batches of similar prompt length, one batch at a time.

        Prompt and answer must fit the window: the prompt is cut from the left (as HELM does) to leave room for
        ``max_tokens``, which is itself capped at one token less than the window.
        """
        groups: dict[tuple[int, tuple[str, ...], float, int], list[int]] = defaultdict(list)
        for index, request in enumerate(requests):
            groups[(request.max_tokens, request.stop, request.temperature, request.seed)].append(index)
        for (max_tokens, stop, temperature, seed), indices in groups.items():
            budget = min(max_tokens, self.max_length - 1)
            encoded = {i: self._encode(requests[i].prompt) or [self.start_id] for i in indices}
            prompts = {i: tokens[-(self.max_length - budget) :] for i, tokens in encoded.items()}
            order = sorted(indices, key=lambda i: (-len(prompts[i]), i))
            for batch in _chunks(order, self.generation_batch_size):
                results = self._generate_batch([prompts[i] for i in batch], budget, stop, temperature, seed)
                yield [(i, replace(r, truncated_tokens=len(encoded[i]) - len(prompts[i]))) for i, r in zip(batch, results)]

    def _generate_batch(
        self, prompts: list[list[int]], max_tokens: int, stop: tuple[str, ...], temperature: float, seed: int
    ) -> list[GenerationResult]:
        import torch
        import transformers

        started = time.perf_counter()
        ids, mask = self._pad(prompts, left=True)
        width = ids.shape[1]
        config = transformers.GenerationConfig(
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
        new_tokens = output.sequences[:, width:].tolist()
        step_logprobs = torch.stack([torch.log_softmax(step.float(), dim=-1) for step in output.logits], dim=1)
        elapsed = (time.perf_counter() - started) / len(prompts)
        results = []
        for r, tokens in enumerate(new_tokens):
            if self.eos_id is not None and self.eos_id in tokens:
                tokens = tokens[: tokens.index(self.eos_id)]
            text, kept = self._cut_at_stop(tokens, stop)
            logprobs = tuple(float(step_logprobs[r, k, tokens[k]]) for k in range(kept))
            if bool(torch.isnan(step_logprobs[r, : max(kept, 1)]).any()):
                raise ModelOutputError(
                    f"model {self.info.name!r} returned NaN log-probabilities while generating; "
                    "its weights or dtype are broken (try --holistic-dtype float32)"
                )
            results.append(GenerationResult(text, logprobs, len(prompts[r]), elapsed))
        return results

    def _cut_at_stop(self, tokens: list[int], stop: tuple[str, ...]) -> tuple[str, int]:
        """The text up to the first stop sequence, and how many tokens it took (at least one, if any)."""
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        cuts = [text.index(s) for s in stop if s and s in text]
        if not cuts:
            return text, len(tokens)
        text = text[: min(cuts)]
        for kept in range(1, len(tokens) + 1):
            if len(self.tokenizer.decode(tokens[:kept], skip_special_tokens=True)) >= len(text):
                return text, kept
        return text, len(tokens)
