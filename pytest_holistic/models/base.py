"""The batch-first model protocol and the plain request/result records it exchanges.

Requests are frozen and hashable, so identical requests are computed once and results can be cached.
A model answers whole lists, and streams them batch by batch (``*_batches``) so the response cache can
commit each batch the moment it is done; :class:`BatchStreaming` derives the list methods from the
streaming ones for backends that only write those. A backend whose requests are independent of each other (a
served model) reports a request that failed as that request's :class:`Failed` outcome in its stream, so one bad
request costs only the items that asked it and is never sent again as part of a smaller batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, Protocol, runtime_checkable

from ..errors import ModelOutputError

if TYPE_CHECKING:
    from .engine import EngineCommand, EngineSession


@dataclass(frozen=True)
class ModelOptions:
    """What the run says about any model, whichever backend serves it; each backend declares the rest itself.

    The device and batch size also shape the run (which GPU a worker takes, how many items a shard holds).
    """

    device: str = "auto"
    batch_size: int | None = None  # None: chosen by the backend (8 on CPU, from free memory on GPU)
    revision: str | None = None  # which weights the named model means (a hub commit or tag, a served model's version)


@dataclass(frozen=True)
class GenerationRequest:
    """Greedy (temperature 0) by default, so results are reproducible and cacheable."""

    prompt: str
    max_tokens: int = 32
    stop: tuple[str, ...] = ("\n",)
    temperature: float = 0.0
    seed: int = 0


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Log-probability of ``continuation`` given ``context``.

    ``text_start``: the context is the beginning of a text (language modelling's document), so a local model sees its
    start token before it, as HELM's language-modelling window conditions the whole document on one; otherwise the
    context is fed as it is (a prompt: HELM's echoed scoring requests have no start token). An empty context always
    gets the start token. Served engines tokenise the text themselves, start token included where their tokenizer
    adds one.
    """

    context: str
    continuation: str
    text_start: bool = False

    KEYED_ONLY_OFF_DEFAULT: ClassVar[frozenset[str]] = frozenset({"text_start"})
    """Fields added after answers were cached: they join a request's cache key only when not at their default, so
    every key written before them stays valid."""


@dataclass(frozen=True)
class GenerationResult:
    """``truncated_tokens``: prompt tokens dropped from the left to fit the window; ``cached``: replayed from the cache.

    ``logprobs_returned``: the engine gave the answer's token log-probabilities, so the answer has a probability even
    when ``token_logprobs`` is empty (an answer the model ended at once: probability 1, HELM's ``max_prob``); False
    where the engine gives none.
    """

    text: str
    token_logprobs: tuple[float, ...] = ()
    tokens_in: int = 0
    seconds: float = 0.0
    truncated_tokens: int = 0
    cached: bool = field(default=False, compare=False)  # where the answer came from, not part of it
    logprobs_returned: bool = False

    @property
    def logprob(self) -> float:
        return float(sum(self.token_logprobs))

    @property
    def tokens_out(self) -> int:
        return len(self.token_logprobs)


@dataclass(frozen=True)
class LoglikelihoodResult:
    """``truncated_tokens``: context tokens dropped from the left to fit the window; ``cached``: replayed from the cache."""

    logprob: float
    is_greedy: bool = False
    tokens_in: int = 0
    tokens_scored: int = 0
    seconds: float = 0.0
    truncated_tokens: int = 0
    cached: bool = field(default=False, compare=False)  # where the answer came from, not part of it


class ReadOnlyDict(dict[str, Any]):
    """A dict that refuses every change: still a dict to ``json.dumps``, ``==`` and ``dict(...)``, so what a
    :class:`ModelInfo` produces is what it produced when its mappings were plain dicts (a ``MappingProxyType`` is
    not JSON-serialisable, and a caller may dump ``info.details`` as it is)."""

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a ModelInfo's details and variant are read-only; make a new info (ModelInfo.with_details)")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied as a new read-only dict of the same items (never filled in place)."""
        return (type(self), (dict(self),))


@dataclass(frozen=True)
class ModelInfo:
    """Provenance recorded in every report: which weights produced the numbers.

    ``name``, ``backend``, ``revision`` and ``variant`` are the cache identity. ``variant`` holds whatever
    else changes an answer (the transformers backend puts the dtype and the device kind there), so it must
    be known without loading. ``details`` (device, dtype, parameters) describe one loaded copy and are empty
    when the identity was computed without loading (or hold the last load's, marked ``from_cache``).

    Never changed once made: ``details`` and ``variant`` are read-only copies of what was given (:class:`ReadOnlyDict`),
    and a model whose details change (a batch halved after running out of memory) holds a new info (:meth:`with_details`).
    """

    name: str
    backend: str
    revision: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    variant: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Part of making it: the caller's dicts are copied, so nothing it keeps can change this info later.
        object.__setattr__(self, "details", ReadOnlyDict(self.details))
        object.__setattr__(self, "variant", ReadOnlyDict(self.variant))

    def with_details(self, changes: Mapping[str, Any] = MappingProxyType({}), drop: Iterable[str] = ()) -> ModelInfo:
        """A new info whose details drop the keys in ``drop``, then take ``changes``.

        Keys keep their place, new ones come last, a dropped key set again comes last: the order a dict changed
        in place would have, so the reports' JSON is the same.
        """
        dropped = set(drop)
        details = {key: value for key, value in self.details.items() if key not in dropped}
        details.update(changes)
        return replace(self, details=details)

    def with_variant(self, changes: Mapping[str, str], drop: Iterable[str] = ()) -> ModelInfo:
        """A new info whose variant drops the keys in ``drop``, then takes ``changes`` (in :meth:`with_details`' order)."""
        dropped = set(drop)
        variant = {key: value for key, value in self.variant.items() if key not in dropped}
        variant.update(changes)
        return replace(self, variant=variant)

    def to_data(self) -> dict[str, Any]:
        """Plain builtin types, for reports and for crossing process boundaries."""
        return {
            "name": self.name,
            "backend": self.backend,
            "revision": self.revision,
            "variant": dict(self.variant),
            "details": dict(self.details),
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ModelInfo:
        return cls(
            str(data["name"]),
            str(data["backend"]),
            data.get("revision"),
            dict(data.get("details") or {}),
            {str(k): str(v) for k, v in (data.get("variant") or {}).items()},
        )


@dataclass(frozen=True)
class Failed:
    """The outcome of one request that failed by itself, in place of its result in a batch stream.

    Only backends whose requests are independent report these (each served request has its own retries and
    deadline): the failure belongs to that request alone, so the caller gives its error to the items that asked it
    and neither retries it nor splits the batch. A local model's batch that fails as a whole raises instead.
    """

    error: Exception


class Cancelled(ModelOutputError):
    """The session is ending (Ctrl-C, SIGTERM): the remaining requests were not computed, and nothing will be."""


@runtime_checkable
class Model(Protocol):
    """Every backend answers whole lists of requests, so it can batch them as it sees fit.

    ``*_batches`` yield ``(index, outcome)`` pairs one finished batch at a time; every index appears once. An
    outcome is the request's result, or :class:`Failed` with the error of a request that failed on its own (the
    successes of the same stream are still handed on). A failure of the whole batch (device memory) is raised.
    """

    @property
    def info(self) -> ModelInfo:
        """Which model answers (an attribute or a property)."""
        ...

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]: ...

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]: ...

    def loglikelihood_batches(
        self, requests: Sequence[LoglikelihoodRequest]
    ) -> Iterator[list[tuple[int, LoglikelihoodResult]]]: ...

    def generate_batches(self, requests: Sequence[GenerationRequest]) -> Iterator[list[tuple[int, GenerationResult]]]: ...


# -- optional features: a caller asks ``isinstance(model, Feature)`` and uses the feature only where it is there ------


@runtime_checkable
class Cancellable(Protocol):
    """A model (or backend) that can end its requests in flight at once: a served one shuts its connections.

    Asked when the session ends (Ctrl-C, SIGTERM), so a stream waiting on a hung server ends now rather than at its
    request's deadline. A local model has nothing in flight to end between batches.
    """

    def cancel(self) -> None: ...


@runtime_checkable
class ConcurrentStreams(Protocol):
    """A model whose request streams may run side by side (a served model's independent requests).

    ``concurrent_streams`` True lets the executor compute a session's shards at once (its ``Pipeline``); a local
    model shares one device, so its streams run one after the other.
    """

    @property
    def concurrent_streams(self) -> bool: ...


@runtime_checkable
class LoadsLazily(Protocol):
    """A model that loads its weights on first use (``CachedModel``), and says whether it has.

    Its details (the device) are known only once ``loaded``; asking before would load it.
    """

    @property
    def loaded(self) -> bool: ...


@runtime_checkable
class AnswersAlone(Protocol):
    """A model that can compute each request by itself, outside any batch and the cache (the determinism canary).

    The batched answer and this one must agree; one that differs depends on what shared its forward pass.
    """

    def answer_alone(self, requests: Sequence[GenerationRequest | LoglikelihoodRequest]) -> list[Any]: ...


@runtime_checkable
class ReportsCapabilities(Protocol):
    """A backend that may lack a kind of request (a served model without prompt log-probabilities), and says so.

    Asked at collection, so a scenario that cannot run fails there in one line; a backend without it can answer
    every kind.
    """

    def missing_capability(self, kind: str) -> str | None: ...


@runtime_checkable
class ManagesEngine(Protocol):
    """A backend whose model runs in an engine server that the session starts once and shares (``vllm:MODEL``).

    pytest's main process asks for ``engine_command`` at configure and starts the engine's supervisor with it
    (:mod:`.engine`); every process then hands its backend the session with ``join_engine`` before loading, so
    all of them send their requests to the one engine, which starts only when a process first loads the model.
    """

    def engine_command(self) -> EngineCommand: ...

    def join_engine(self, session: EngineSession) -> None: ...


def outcomes(count: int, batches: Iterator[list[tuple[int, Any]]]) -> list[Any]:
    """The outcomes of a batch stream in request order: results, and :class:`Failed` for requests that failed."""
    results: list[Any] = [None] * count
    for batch in batches:
        for index, result in batch:
            results[index] = result
    return results


def collect(count: int, batches: Iterator[list[tuple[int, Any]]]) -> list[Any]:
    """The results of a batch stream in request order; the first failed request's error once the stream has ended."""
    results = outcomes(count, batches)
    failed = next((result for result in results if isinstance(result, Failed)), None)
    if failed is not None:
        raise failed.error
    return results


class BatchStreaming:
    """Mixin: ``generate`` and ``loglikelihood`` from the streaming methods a backend implements."""

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        return collect(len(requests), self.loglikelihood_batches(requests))

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        return collect(len(requests), self.generate_batches(requests))

    def loglikelihood_batches(self, requests: Sequence[LoglikelihoodRequest]) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        raise NotImplementedError(f"{type(self).__name__} must implement loglikelihood_batches")

    def generate_batches(self, requests: Sequence[GenerationRequest]) -> Iterator[list[tuple[int, GenerationResult]]]:
        raise NotImplementedError(f"{type(self).__name__} must implement generate_batches")
