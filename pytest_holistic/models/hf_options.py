"""The transformers backends' own options (a hub name or folder, and the embedded model): declared, read and checked.

Kept apart from :mod:`.hf` so that declaring them at every start imports no model code; transformers and torch
load only with a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..options import Given, Option, Values, one_of, switch
from .base import ModelOptions
from .scoring import STRATEGIES

DTYPES = ("auto", "float32", "bfloat16", "float16", "float64")


@dataclass(frozen=True)
class HFOptions:
    """How to load and run a transformers model: the run's common options and the ones declared here."""

    device: str = "auto"
    batch_size: int | None = None  # None: chosen by the backend (8 on CPU, from free memory on GPU)
    revision: str | None = None
    dtype: str = "auto"
    scoring: str = "auto"  # log-likelihood strategy (see models/scoring.py)
    prefix_sharing: str = "auto"  # compute a shard's shared token prefixes once (auto, on, off)
    deterministic: bool = False  # float32 without TF32, so scores do not depend on batching
    chat_template: str = "none"  # none (HELM's raw prompts), auto (the tokenizer's, if it has one), or a Jinja file's path
    trust_remote_code: bool = False


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
    "first check against the unshared computation agrees; on a GPU, off; on; off)",
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
OPTIONS: tuple[Option[Any], ...] = (DTYPE, SCORING, PREFIX_SHARING, DETERMINISTIC, TRUST_REMOTE_CODE, CHAT_TEMPLATE)


def read(values: Values, common: ModelOptions) -> HFOptions:
    """The options, checked together: deterministic scores need float32 weights (``auto`` becomes float32)."""
    dtype, deterministic = values[DTYPE], values[DETERMINISTIC]
    if deterministic and dtype not in ("auto", "float32", "float64"):
        raise UserError(f"--holistic-deterministic needs float32 weights, but --holistic-dtype = {dtype!r}; drop one of the two")
    return HFOptions(
        device=common.device,
        batch_size=common.batch_size,
        revision=common.revision,
        dtype="float32" if deterministic and dtype == "auto" else dtype,
        scoring=values[SCORING],
        prefix_sharing=values[PREFIX_SHARING],
        deterministic=deterministic,
        chat_template=values[CHAT_TEMPLATE],
        trust_remote_code=values[TRUST_REMOTE_CODE],
    )
