"""``--model vllm:MODEL``: a vLLM engine the session starts, shares between its workers and stops.

``MODEL`` is a hub name or a local folder, as vLLM's own ``--model`` takes it. pytest's main process starts the
engine's supervisor at configure (:mod:`.engine`); the engine itself starts when a process first needs an answer that
is not cached, from ``--holistic-vllm-python`` (vLLM pins its own torch and transformers, so it often lives in an
environment of its own), with prefix caching on and ``--holistic-vllm-args`` passed through (tensor and data
parallel size, dtype, maximum length, GPU memory share). Every xdist worker sends its requests to that one engine,
which batches them together.

Everything after the start is the served backend (:mod:`.openai_backend`): generation through ``/v1/completions``,
log-likelihoods from echoed prompt log-probabilities. Answers are cached under the model's name and its revision (a
folder's content digest, the hub snapshot's commit, or ``--holistic-model-revision``), and under the engine
arguments that can change an answer (dtype, maximum length...; not those that only place the work, such as the
parallel sizes or the memory share): a warm rerun needs no engine. The report's model details name the engine, its
version and its arguments.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import ModelLoadError
from .base import ModelInfo
from .engine import PORT, EngineCommand, EngineSession, join_argv
from .openai_backend import OpenAIBackend, OpenAIModel
from .openai_options import OpenAIOptions
from .vllm_options import SCHEME, VllmOptions

NAME = "vLLM"
API_KEY_ENV = "PYTEST_HOLISTIC_VLLM_API_KEY"
"""The key sent to the engine, if the user gives ``--api-key`` in its arguments; never the user's OpenAI key."""
PLACEMENT_ONLY = frozenset(
    {
        "--tensor-parallel-size", "-tp", "--data-parallel-size", "-dp", "--pipeline-parallel-size", "-pp",
        "--data-parallel-size-local", "--data-parallel-address", "--data-parallel-rpc-port", "--data-parallel-backend",
        "--distributed-executor-backend", "--gpu-memory-utilization", "--max-num-seqs", "--max-num-batched-tokens",
        "--swap-space", "--cpu-offload-gb", "--port", "--api-key", "--uvicorn-log-level", "--api-server-count",
        "--disable-log-stats", "--disable-log-requests", "--enable-log-requests", "--enable-prefix-caching",
        "--no-enable-prefix-caching", "--block-size", "--kv-cache-memory-bytes", "--data-parallel-rank",
        "--data-parallel-start-rank", "--data-parallel-hybrid-lb", "--data-parallel-external-lb", "--headless",
    }
)  # fmt: skip
"""Engine arguments that place the work without changing an answer, left out of the cache key."""
PREFIX_CACHING = ("--enable-prefix-caching", "--no-enable-prefix-caching")
PROBE = (
    "import importlib.util, sys\n"
    "if importlib.util.find_spec('vllm') is None:\n"
    "    print(f'cannot start: {sys.executable} has no vllm installed; install it there (pip install vllm), or point "
    "--holistic-vllm-python at the python of the environment vLLM is installed in')\n"
    "    sys.exit(3)\n"
)
"""Run first with the engine's Python: a missing vLLM is said in seconds, not after a start-up deadline."""


def parse_spec(spec: str) -> str:
    """``vllm:MODEL`` -> ``MODEL``; an empty one is a one-line error."""
    model = spec[len(SCHEME) + 1 :].strip() if spec.startswith(f"{SCHEME}:") else spec.strip()
    if not model:
        raise ModelLoadError(f"--model {spec!r}: name the model after 'vllm:', a hub name or a local folder (vllm:./my-model)")
    return model


def flag_value(args: tuple[str, ...], flag: str) -> str | None:
    """The value given to ``flag`` (``--port 8001`` or ``--port=8001``), the last one if several."""
    found = None
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            found = args[index + 1]
        elif arg.startswith(f"{flag}="):
            found = arg.split("=", 1)[1]
    return found


def answer_shaping(args: tuple[str, ...]) -> tuple[str, ...]:
    """The arguments that can change an answer: all but ``PLACEMENT_ONLY`` flags and their values."""
    kept: list[str] = []
    skipping = False
    for arg in args:
        if skipping and not arg.startswith("-"):
            skipping = False
            continue
        skipping = False
        flag = arg.split("=", 1)[0]
        if flag in PLACEMENT_ONLY:
            skipping = "=" not in arg
            continue
        kept.append(arg)
    return tuple(kept)


class VllmBackend:
    """Its identity from the spec and the arguments (no engine needed); ``load`` waits for the session's engine."""

    concurrent_streams = True  # the engine takes several request streams at once (shards side by side)

    def __init__(self, spec: str, options: VllmOptions) -> None:
        self.name = parse_spec(spec)
        self.options = options
        folder = Path(self.name).expanduser()
        self.folder = folder.resolve() if folder.is_dir() else None
        port = flag_value(options.engine_args, "--port")
        if port is not None and not port.isdigit():
            raise ModelLoadError(f"--holistic-vllm-args: --port {port!r} is not a port number; give one, or none")
        self.port = int(port) if port is not None else None
        self._session: EngineSession | None = None
        self._identity: ModelInfo | None = None

    # -- the session's engine ----------------------------------------------------------------------

    def engine_command(self) -> EngineCommand:
        """vLLM's OpenAI-compatible server on loopback, prefix caching on unless the arguments say otherwise."""
        args = self.options.engine_args
        caching = () if any(arg.split("=", 1)[0] in PREFIX_CACHING for arg in args) else ("--enable-prefix-caching",)
        port = () if self.port is not None else ("--port", PORT)
        argv = (
            self.options.python, "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(self.folder or self.name), "--served-model-name", self.name, "--host", "127.0.0.1",
            *port, *caching, *args,
        )  # fmt: skip
        environment = {"VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "VLLM_HOST_IP": "127.0.0.1"}
        if self.folder is not None:
            environment["HF_HUB_OFFLINE"] = "1"  # a local folder: nothing to fetch
        return EngineCommand(
            NAME,
            argv,
            environment,
            port=self.port,
            version_path="/version",
            start_timeout=self.options.start_timeout,
            probe_argv=(self.options.python, "-c", PROBE),
            fix="fix the model or --holistic-vllm-args as the log says",
        )

    def join_engine(self, session: EngineSession) -> None:
        self._session = session

    # -- the backend -------------------------------------------------------------------------------

    def missing_capability(self, kind: str) -> str | None:
        """Nothing: vLLM echoes prompt log-probabilities, which the start-up probe checks once the engine runs."""
        return None

    def identify(self) -> ModelInfo:
        """Name, revision and the answer-shaping arguments, computed without the engine (a warm rerun needs none)."""
        if self._identity is None:
            if self.options.revision:
                revision: str | None = self.options.revision
            elif self.folder is not None:
                from .fingerprint import folder_digest

                revision = folder_digest(self.folder)
            else:
                from .hf import hub_revision

                revision = hub_revision(self.name, None)  # None until vLLM has fetched it: such a run is not cached
            variant = {"endpoint": "completions", "engine_args": join_argv(answer_shaping(self.options.engine_args))}
            self._identity = ModelInfo(self.name, SCHEME, revision, variant=variant)
        return self._identity

    def load(self) -> OpenAIModel:
        """The session's engine, started now if no process has started it, through the served backend."""
        session = self._session
        if session is None:  # outside a pytest session (load_model): an engine of this process's own
            session = self._session = EngineSession.start_supervisor(self.engine_command())
        state = session.ready(NAME, self.options.start_timeout + 120.0)
        served = OpenAIBackend(
            f"openai:{state.url}#{self.name}",
            OpenAIOptions(
                revision=self.options.revision,
                api_key_env=API_KEY_ENV,
                api_endpoint="completions",
                concurrency=self.options.concurrency,
                request_timeout=self.options.request_timeout,
                retries=self.options.retries,
            ),
        )
        model = served.load()
        identity = self.identify()
        details = {
            **model.info.details,
            "engine": NAME,
            "engine_version": state.version,
            "engine_args": join_argv(
                [arg.replace(PORT, str(urlsplit(state.url).port)) for arg in self.engine_command().argv[3:]]
            ),
            "engine_start_seconds": state.seconds,
        }
        model.info = replace(identity, details=details)
        model.start_text = start_text(self.folder or self.name)
        return model


def start_text(model: Path | str) -> str:
    """The text of the start token the transformers backend puts before a text (its BOS token, else its end-of-text
    token), when the model's tokenizer does not add it by itself (GPT-2's, SmolLM2's): sent before a document's first
    piece, vLLM then scores the document's first token after it, as the transformers backend does, instead of leaving
    it without a log-probability. Empty when the tokenizer adds it already (Llama's) or cannot be read offline."""
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(model), local_files_only=True)
    except Exception:  # noqa: BLE001 - no local tokenizer: the engine adds what its tokenizer adds
        return ""
    start = tokenizer.bos_token_id if isinstance(tokenizer.bos_token_id, int) else tokenizer.eos_token_id
    if not isinstance(start, int) or tokenizer("x")["input_ids"][:1] == [start]:
        return ""
    token = tokenizer.convert_ids_to_tokens(start)
    return token if isinstance(token, str) and tokenizer(token, add_special_tokens=False)["input_ids"] == [start] else ""

