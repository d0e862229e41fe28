"""Command-line options and ini settings, read once into a frozen object."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .errors import UserError
from .gates import Gate, parse_gate
from .metrics import TOXICITY
from .models.base import ModelOptions
from .scenarios.scenario import SOURCES

DEFAULT_MODEL = "smollm2-135m"


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("holistic", "holistic language-model evaluation")
    group.addoption(
        "--model",
        "--holistic-model",
        dest="holistic_model",
        default=None,
        metavar="NAME_OR_PATH",
        help=f"model to evaluate: a hub name (gpt2-large), a local folder, scripted:PATH, or {DEFAULT_MODEL} (default)",
    )
    group.addoption(
        "--holistic-gate",
        dest="holistic_gates",
        action="append",
        default=[],
        metavar="EXPR",
        help="scenario-level threshold '[scenario:]metric OP number', e.g. 'boolq:quasi_exact_match>=0.6' (repeatable)",
    )
    group.addoption(
        "--holistic-report-dir",
        dest="holistic_report_dir",
        default=None,
        metavar="DIR",
        help="where report.json is written (default: ./reports)",
    )
    group.addoption(
        "--holistic-source",
        dest="holistic_source",
        default=None,
        choices=SOURCES,
        help="read scenarios from their shipped files (local, default) or the real dataset on the hub",
    )
    group.addoption(
        "--holistic-max-instances",
        dest="holistic_max_instances",
        type=int,
        default=None,
        metavar="N",
        help="evaluate at most N instances per scenario (seeded sample)",
    )
    group.addoption(
        "--holistic-batch-size",
        dest="holistic_batch_size",
        default=None,
        metavar="N|auto",
        help="contexts (or prompts) per forward pass; auto: 8 on CPU, from free memory on GPU",
    )
    group.addoption(
        "--holistic-cache-dir",
        dest="holistic_cache_dir",
        default=None,
        metavar="DIR",
        help="response cache shared by all workers (default: <report dir>/.cache); --cache-clear empties it",
    )
    group.addoption(
        "--holistic-no-cache",
        dest="holistic_no_cache",
        action="store_true",
        default=False,
        help="neither read nor write the response cache",
    )
    group.addoption(
        "--holistic-shard-size",
        dest="holistic_shard_size",
        type=int,
        default=None,
        metavar="N",
        help="items of one test function batched together and sent to one xdist worker (default 64)",
    )
    group.addoption(
        "--holistic-toxicity-scorer",
        dest="holistic_toxicity_scorer",
        default=None,
        metavar="SCORER",
        help="profanity (offline default: alt-profanity-check), hf:NAME_OR_FOLDER (a text classifier), "
        "or perspective (PERSPECTIVE_API_KEY)",
    )
    group.addoption("--holistic-device", dest="holistic_device", default=None, help="cpu, cuda, cuda:1 ... (default: auto)")
    group.addoption("--holistic-dtype", dest="holistic_dtype", default=None, help="auto, float32, bfloat16 or float16")
    group.addoption("--holistic-model-revision", dest="holistic_model_revision", default=None, help="hub revision of --model")
    group.addoption(
        "--holistic-trust-remote-code",
        dest="holistic_trust_remote_code",
        action="store_true",
        default=False,
        help="allow the model repository to run its own code (off unless asked)",
    )
    parser.addini("holistic_model", "model to evaluate (see --model)", default=DEFAULT_MODEL)
    parser.addini("holistic_gates", "scenario-level thresholds, one per line", type="linelist", default=[])
    parser.addini("holistic_report_dir", "report folder, relative to the ini file (default: ./reports)", default="")
    parser.addini("holistic_source", "local or hub", default="local")
    parser.addini("holistic_batch_size", "contexts or prompts per forward pass, or auto", default="auto")
    parser.addini("holistic_cache_dir", "response cache folder, relative to the ini file", default="")
    parser.addini("holistic_toxicity_scorer", "profanity, hf:NAME_OR_FOLDER or perspective", default="profanity")
    parser.addini("holistic_shard_size", "items of one test function batched together and sent to one xdist worker", default="64")


@dataclass(frozen=True)
class Settings:
    model: str
    model_options: ModelOptions
    gates: tuple[Gate, ...]
    report_dir: Path
    cache_dir: Path | None
    source: str
    max_instances: int | None
    shard_size: int
    scorer_specs: Mapping[str, str] = field(default_factory=dict)  # model-scored metric -> the scorer the user chose

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        option = config.option
        gates = tuple(parse_gate(text, "ini") for text in config.getini("holistic_gates")) + tuple(
            parse_gate(text, "command line") for text in option.holistic_gates
        )
        source = option.holistic_source or config.getini("holistic_source")
        if source not in SOURCES:
            raise UserError(f"holistic_source = {source!r} is not one of {', '.join(SOURCES)}")
        report_dir = (
            _folder(config, option.holistic_report_dir, "holistic_report_dir") or config.invocation_params.dir / "reports"
        )
        batch_text = str(option.holistic_batch_size or config.getini("holistic_batch_size")).strip()
        batch_size = None if batch_text == "auto" else _positive(batch_text, "batch size")
        cache_dir = (
            None
            if option.holistic_no_cache
            else (_folder(config, option.holistic_cache_dir, "holistic_cache_dir") or report_dir / ".cache")
        )
        return cls(
            model=option.holistic_model or config.getini("holistic_model") or DEFAULT_MODEL,
            model_options=ModelOptions(
                device=option.holistic_device or "auto",
                dtype=option.holistic_dtype or "auto",
                batch_size=batch_size,
                revision=option.holistic_model_revision,
                trust_remote_code=option.holistic_trust_remote_code,
            ),
            gates=gates,
            report_dir=report_dir,
            cache_dir=cache_dir,
            source=source,
            max_instances=None
            if option.holistic_max_instances is None
            else _positive(option.holistic_max_instances, "max instances"),
            shard_size=_positive(option.holistic_shard_size or config.getini("holistic_shard_size"), "shard size"),
            scorer_specs={
                TOXICITY.name: TOXICITY.check_spec(option.holistic_toxicity_scorer or config.getini("holistic_toxicity_scorer"))
            },
        )


def _folder(config: pytest.Config, given: str | None, ini_name: str) -> Path | None:
    """A folder from the command line (relative to where pytest was started) or the ini file (relative to it)."""
    if given:
        return config.invocation_params.dir / Path(given).expanduser()
    if config.getini(ini_name):
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        return base / Path(config.getini(ini_name)).expanduser()
    return None


def _positive(value: object, what: str) -> int:
    try:
        number = int(str(value))
    except ValueError:
        raise UserError(f"{what} {value!r} is not a whole number") from None
    if number < 1:
        raise UserError(f"{what} must be at least 1, got {number}")
    return number


def check_writable(folder: Path) -> None:
    """Fail before any model work if reports could not be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise UserError(
            f"cannot write reports to {folder}: {error.strerror or error}; pass --holistic-report-dir with a writable folder"
        ) from None
