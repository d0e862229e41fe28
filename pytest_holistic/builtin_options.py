"""The options of the built-in model-scored metrics and model backends, declared at every pytest start.

pytest must know every option before it parses the command line, also in a run with no eval in it; so these
declarations (flag, ini key, help, default, and the parse that checks a value) live in one module that imports
nothing but the option machinery, and their owners (``metrics/toxicity.py``, ``metrics/summarization.py``,
``models/hf_options.py``, ``models/openai_options.py``) take theirs from here. The checks a parse needs are the
plain text and path checks below; the code that uses a value loads only in a session with holistic work.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .errors import UserError
from .options import Given, Option, one_of, switch, whole_number

# -- the transformers backends (a hub name or folder, and the embedded model) ---------------------------------

DTYPES = ("auto", "float32", "bfloat16", "float16", "float64")
STRATEGIES: tuple[str, ...] = ("auto", "shared", "full", "packed")
"""The log-likelihood strategies of ``models/scoring.py``, ``auto`` first."""


def _chat_template(given: Given) -> str:
    """auto, none, or the absolute path of a readable template file (a missing file is named now, not per item)."""
    text = given.text or "none"
    if text in ("auto", "none"):
        return text
    path = given.base / Path(text).expanduser()
    if not path.is_file():
        raise UserError(f"{given.origin} = {text!r}: no such template file; give auto, none or the path of a Jinja chat template")
    return str(path.resolve())


DTYPE = Option("--holistic-dtype", f"{', '.join(DTYPES)} (default auto)", one_of(DTYPES, "auto"))
SCORING = Option(
    "--holistic-scoring",
    "how log-likelihoods are computed: auto (default: shared on CPU, packed on GPU), shared, full or packed",
    one_of(STRATEGIES, "auto"),
    metavar="STRATEGY",
)
PREFIX_SHARING = Option(
    "--holistic-prefix-sharing",
    "transformers models: compute the token prefixes a shard's prompts share (instructions, in-context "
    "examples) once and run only each request's own suffix (auto, the default: on CPU, when it saves work and a "
    "first check against the unshared computation agrees; on a GPU, inside packed scoring passes only; on; off)",
    one_of(("auto", "on", "off"), "auto"),
    choices=("auto", "on", "off"),
)
DETERMINISTIC = Option(
    "--holistic-deterministic",
    "scores that do not depend on batch size or worker count: float32 weights, no TF32 (slower on a GPU)",
    switch,
    switch=True,
)
TRUST_REMOTE_CODE = Option(
    "--holistic-trust-remote-code", "allow the model repository to run its own code (off unless asked)", switch, switch=True
)
CHAT_TEMPLATE = Option(
    "--holistic-chat-template",
    "generation prompts through a chat template: none (default: HELM's raw prompts), auto (the tokenizer's "
    "own, raw prompts for models without one), or a Jinja template file",
    _chat_template,
    default="none",
    ini="holistic_chat_template",
    ini_help="auto, none or a Jinja chat template file (relative to the ini file)",
    metavar="auto|none|PATH",
)
HF_OPTIONS: tuple[Option[Any], ...] = (DTYPE, SCORING, PREFIX_SHARING, DETERMINISTIC, TRUST_REMOTE_CODE, CHAT_TEMPLATE)


# -- the served-model backend (openai:URL#NAME) ------------------------------------------------------

API_ENDPOINTS = ("auto", "completions", "chat")


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
    "--holistic-concurrency", "openai: and vllm: models: requests in flight at once per process (default 8)", _concurrency, metavar="N"
)
REQUEST_TIMEOUT = Option(
    "--holistic-request-timeout",
    "openai: and vllm: models: wall-clock seconds one try of a request may take, connecting, headers and body together, "
    "before it is retried (default 300); one request takes at most (retries + 1) x SECONDS + retries x 30 s",
    _seconds,
    metavar="SECONDS",
)
RETRIES = Option(
    "--holistic-retries",
    "openai: and vllm: models: further tries after a 429, a 5xx, a timeout or a dropped connection (default 4): a request "
    "is sent at most N + 1 times, waiting the server's Retry-After (at most 30 s) or a backoff in between",
    _retries,
    metavar="N",
)
OPENAI_OPTIONS: tuple[Option[Any], ...] = (API_KEY_ENV, API_ENDPOINT, CONCURRENCY, REQUEST_TIMEOUT, RETRIES)


# -- the managed vLLM engine (vllm:MODEL) --------------------------------------------------------------------

VLLM_OWN_ARGS = ("--model", "--served-model-name", "--host")
"""Engine arguments the plugin sets itself: the model comes from ``vllm:MODEL``, the engine listens on loopback."""


def _python(given: Given) -> str:
    """The interpreter that runs vLLM (default: this one), as an absolute path that exists."""
    import sys

    if not given.text:
        return sys.executable
    path = (given.base / Path(given.text).expanduser()).absolute()
    if not path.is_file() or not os.access(path, os.X_OK):
        raise given.error("no such Python interpreter; give the python of the environment vLLM is installed in")
    return str(path)


def _engine_args(given: Given) -> tuple[str, ...]:
    """The user's engine arguments, split as a shell would; the ones the plugin sets itself are refused."""
    import shlex

    try:
        args = tuple(shlex.split(given.text))
    except ValueError as error:
        raise given.error(f"cannot split it into arguments ({error}); quote as in a shell") from None
    for arg in args:
        flag = arg.split("=", 1)[0]
        if flag in VLLM_OWN_ARGS:
            raise given.error(f"{flag} is set by pytest-holistic (the model comes from --model vllm:MODEL); leave it out")
    return args


def _start_timeout(given: Given) -> float:
    return 600.0 if not given.text else _seconds(given)


VLLM_PYTHON = Option(
    "--holistic-vllm-python",
    "vllm: models: the Python that runs vLLM, e.g. the python of a virtual environment of its own (default: this one)",
    _python,
    ini="holistic_vllm_python",
    ini_help="the Python that runs vLLM for vllm: models (relative to the ini file)",
    metavar="PATH",
)
VLLM_ARGS = Option(
    "--holistic-vllm-args",
    "vllm: models: arguments for vLLM's server, as one quoted string, e.g. \"--tensor-parallel-size 2 --dtype "
    "bfloat16 --max-model-len 8192 --gpu-memory-utilization 0.85\" (prefix caching is on unless "
    "--no-enable-prefix-caching is given)",
    _engine_args,
    ini="holistic_vllm_args",
    metavar="ARGS",
)
VLLM_START_TIMEOUT = Option(
    "--holistic-vllm-start-timeout",
    "vllm: models: seconds the engine may take to start, loading included (default 600)",
    _start_timeout,
    ini="holistic_vllm_start_timeout",
    metavar="SECONDS",
)
VLLM_OPTIONS: tuple[Option[Any], ...] = (VLLM_PYTHON, VLLM_ARGS, VLLM_START_TIMEOUT)

# -- the toxicity metric --------------------------------------------------------------------------------

SCORER_SPECS = "profanity (offline), perspective (PERSPECTIVE_API_KEY), or hf:NAME_OR_FOLDER (a text classifier)"


def check_scorer_spec(spec: str) -> str:
    """The spec stripped, or a user error listing the accepted forms."""
    spec = spec.strip()
    if spec in ("profanity", "perspective") or (spec.startswith("hf:") and len(spec) > 3):
        return spec
    raise UserError(f"unknown toxicity scorer {spec!r}; use {SCORER_SPECS}")


def _scorer_choice(given: Given) -> str:
    try:
        return check_scorer_spec(given.text)
    except UserError as error:
        raise UserError(f"{given.origin}: {error}") from None


TOXICITY_SCORER = Option(
    "--holistic-toxicity-scorer",
    "profanity (offline default: alt-profanity-check), hf:NAME_OR_FOLDER (a text classifier), or perspective "
    "(PERSPECTIVE_API_KEY)",
    _scorer_choice,
    default="profanity",
    ini="holistic_toxicity_scorer",
    ini_help="profanity, hf:NAME_OR_FOLDER or perspective",
    metavar="SCORER",
)
"""The user's choice of toxicity scorer, on the command line or in the ini file."""


# -- the summarisation metrics that need a model the user names ---------------------------------------------


def split_bertscore_spec(spec: str) -> tuple[Path, int | None]:
    """``FOLDER`` or ``FOLDER#LAYER`` -> (folder, layer or None)."""
    folder, _, layer = spec.rpartition("#") if "#" in spec else (spec, "", "")
    if layer and not (layer.isdigit()):
        raise UserError(f"layer {layer!r} in {spec!r} must be a whole number >= 0 (FOLDER#LAYER)")
    return Path(folder).expanduser(), int(layer) if layer else None


def check_summary_model_spec(metric: str, spec: str) -> str:
    """The spec normalised (folders made absolute), or a UserError saying what form it takes."""
    spec = spec.strip()
    if not spec:
        return ""
    if metric.startswith("bertscore"):
        folder, layer = split_bertscore_spec(spec)
        if not (folder / "config.json").is_file():
            raise UserError(
                f"{str(folder)!r} is not a model folder with a config.json (a transformers encoder saved by save_pretrained)"
            )
        return str(folder.resolve()) + (f"#{layer}" if layer is not None else "")
    if metric == "summac":
        if not spec.startswith("hf:") or len(spec) == 3:
            raise UserError(f"{spec!r}: use hf:FOLDER (an NLI sequence classifier saved by save_pretrained, or a hub name)")
        target = Path(spec[3:]).expanduser()
        return f"hf:{target.resolve()}" if target.exists() else spec
    module, _, function = spec.partition(":")
    if not module or not function.isidentifier():
        raise UserError(f"{spec!r}: use MODULE:FUNCTION, a callable (summaries, articles) -> scores")
    return spec


def _model_option(flag: str, metavar: str, text: str, metric: str) -> Option[str]:
    """The option naming the model behind ``metric`` (its kin share it): empty, a one-line skip; else checked now."""

    def parse(given: Given) -> str:
        if not given.text:
            return ""
        try:
            return check_summary_model_spec(metric, given.text)
        except UserError as error:
            raise given.error(str(error)) from None

    return Option(flag, text, parse, default="", ini=flag.lstrip("-").replace("-", "_"), metavar=metavar)


BERTSCORE_MODEL = _model_option(
    "--holistic-bertscore-model",
    "FOLDER[#LAYER]",
    "a local transformers encoder folder for bertscore_precision/recall/f1",
    "bertscore_f1",
)
SUMMAC_MODEL = _model_option(
    "--holistic-summac-model", "hf:FOLDER", "an NLI sequence classifier for summac (SummaC-ZS)", "summac"
)
QAFACTEVAL_SCORER = _model_option(
    "--holistic-qafacteval-scorer", "MODULE:FUNCTION", "a callable (summaries, articles) -> scores for qafacteval", "qafacteval"
)


BUILTIN: tuple[tuple[Option[Any], str], ...] = (
    (TOXICITY_SCORER, "metric 'toxicity'"),
    (BERTSCORE_MODEL, "metric 'bertscore_precision'"),
    (SUMMAC_MODEL, "metric 'summac'"),
    (QAFACTEVAL_SCORER, "metric 'qafacteval'"),
    *((option, "model backend 'transformers'") for option in HF_OPTIONS),
    *((option, "model backend 'openai'") for option in OPENAI_OPTIONS),
    *((option, "model backend 'vllm'") for option in VLLM_OPTIONS),
)
"""Every option above with who owns it, in the order ``pytest --help`` lists them."""
