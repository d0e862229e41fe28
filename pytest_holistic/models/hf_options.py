"""The transformers backends' own options (a hub name or folder, and the embedded model): declared, read and checked.

The options themselves are declared in :mod:`..builtin_options`, which every pytest start imports; the rest is
kept apart from :mod:`.hf`, so that reading them imports no model code: transformers and torch load only with a model.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..builtin_options import CHAT_TEMPLATE, DETERMINISTIC, DTYPE, DTYPES, PREFIX_SHARING, SCORING, TRUST_REMOTE_CODE
from ..builtin_options import HF_OPTIONS as OPTIONS
from ..errors import UserError
from ..options import Values
from .base import ModelOptions


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


__all__ = [
    "CHAT_TEMPLATE",
    "DETERMINISTIC",
    "DTYPE",
    "DTYPES",
    "OPTIONS",
    "PREFIX_SHARING",
    "SCORING",
    "TRUST_REMOTE_CODE",
    "HFOptions",
    "read",
]
