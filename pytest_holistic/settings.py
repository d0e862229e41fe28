"""Command-line options and ini settings, read once into a frozen object."""

from __future__ import annotations

import math
import os
import platform
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from . import _devices
from .command_line import DEFAULT_MODEL, JUNIT, MODEL_FORMS, SOURCES
from .errors import UserError
from .gates import Gate, parse_gate
from .metrics.base import ScoredMetric
from .models.base import ModelOptions
from .models.registry import Backends
from .options import Given, Values, ini_flag, ini_origin, pick
from .regression_specs import RegressionSpec, check_regression_specs

if TYPE_CHECKING:
    from .extensions import Extensions
    from .perturbations.wordlists import WordLists
    from .writer_kinds import WriterKind

_DEVICE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")
@dataclass(frozen=True)
class Settings:
    model: str
    model_options: ModelOptions  # what the run says about any model; each backend's own options are in backend_options
    gates: tuple[Gate, ...]
    report_dir: Path
    cache_dir: Path | None
    source: str
    max_instances: int | None
    shard_size: int
    backends: Backends = field(default_factory=Backends)  # the registered kinds of backend
    backend_options: Mapping[str, object] = field(default_factory=dict)  # backend kind -> its own options, read and checked
    scored: Mapping[str, ScoredMetric] = field(default_factory=dict)  # the registered model-scored metrics, by name
    scorer_specs: Mapping[str, str] = field(default_factory=dict)  # model-scored metric -> the value of its option
    strict_gates: bool = False  # a gate that could not be checked (scenario deselected) fails instead of being skipped
    determinism_check: float = 0.0  # the seeded fraction of items re-scored alone, to catch answers that depend on batching
    overlap: str = "auto"  # compute the next shard in the background: auto (on a GPU), on, off
    perturb: tuple[str, ...] = ()  # perturbations the command line adds to every run (names and sets, checked)
    junit: Path | None = None  # --holistic-junit: the JUnit XML file for CI test reporters
    exports: tuple[str, ...] = ()  # --holistic-export: formats written next to report.json, each once, in order given
    writers: tuple[WriterKind, ...] = ()  # the registered kinds of report writer, the built-in ones first
    values: Values = Values()  # every declared option's parsed value (the writers' own options among them)
    baseline: Path | None = None  # --holistic-baseline: a stored report.json to compare with
    fail_on_regression: tuple[RegressionSpec, ...] = ()  # --holistic-fail-on-regression checks, parsed
    data_dir: Path | None = None  # --holistic-data-dir: copies of hub datasets in their real schema, read instead of the hub
    word_lists: WordLists | None = None  # --holistic-word-lists: the user's copies of HELM's word lists (None: the project's)
    stop_early: bool = False  # --holistic-stop-early: gated scenarios stop once a confidence sequence decides every gate
    stop_level: float = 0.95  # --holistic-stop-level: the level of those sequences
    helm_shots: bool = False  # --holistic-helm-shots: HELM's in-context counts on the offline editions too

    @classmethod
    def from_config(cls, config: pytest.Config, extensions: Extensions) -> Settings:
        """Read and check every option and ini value; a bad one is a UserError naming it, its value and the fix.

        The options that model-scored metrics and backends declare are read through ``extensions``, each by its own parse.
        """
        option = config.option
        gates = tuple(parse_gate(text, "ini") for text in config.getini("holistic_gates")) + tuple(
            parse_gate(text, "command line") for text in option.holistic_gates
        )
        source = pick(config, option.holistic_source, "--holistic-source", "holistic_source")
        if source.value not in SOURCES:
            raise UserError(f"{source.origin} = {source.value!r} is not one of {', '.join(SOURCES)}; use local, hub or auto")
        report_dir = (
            _folder(config, option.holistic_report_dir, "--holistic-report-dir", "holistic_report_dir")
            or config.invocation_params.dir / "reports"
        )
        _check_folder(report_dir, "the report folder (--holistic-report-dir)")
        batch = pick(config, option.holistic_batch_size, "--holistic-batch-size", "holistic_batch_size")
        batch_size = None if batch.text == "auto" else _positive(batch.text, batch.origin, "or auto")
        cache_dir = (
            None
            if option.holistic_no_cache
            else _folder(config, option.holistic_cache_dir, "--holistic-cache-dir", "holistic_cache_dir") or report_dir / ".cache"
        )
        if cache_dir is not None:
            _check_folder(cache_dir, "the response cache folder (--holistic-cache-dir)")
        model = _model_spec(config)
        model_options = ModelOptions(
            device=_device(option.holistic_device), batch_size=batch_size, revision=_revision(option.holistic_model_revision)
        )
        declared = extensions.read(config)
        backends = extensions.backends
        backend_options = backends.read(declared, model_options)
        backends.check(model, backend_options)
        scored = extensions.metrics
        writers = extensions.writers
        shard = pick(config, option.holistic_shard_size, "--holistic-shard-size", "holistic_shard_size")
        return cls(
            model=model,
            model_options=model_options,
            gates=gates,
            report_dir=report_dir,
            cache_dir=cache_dir,
            source=source.value,
            max_instances=None
            if option.holistic_max_instances is None
            else _positive(option.holistic_max_instances, "--holistic-max-instances", "(instances per scenario)"),
            shard_size=_shard_size(shard, model_options),
            backends=backends,
            backend_options=backend_options,
            scored=scored,
            scorer_specs={name: declared[metric.option] for name, metric in scored.items() if metric.option is not None},
            strict_gates=bool(option.holistic_strict_gates or ini_flag(config, "holistic_strict_gates")),
            determinism_check=_fraction(option.holistic_check_determinism),
            overlap=option.holistic_overlap or "auto",
            perturb=_perturb(option.holistic_perturb),
            junit=declared[JUNIT],
            exports=_exports(config, extensions.exports),
            writers=writers,
            values=declared,
            baseline=_path(config, option.holistic_baseline),
            fail_on_regression=check_regression_specs(option.holistic_fail_on_regression, option.holistic_baseline),
            data_dir=_data_dir(config),
            word_lists=_word_lists(config),
            stop_early=bool(option.holistic_stop_early or ini_flag(config, "holistic_stop_early")),
            stop_level=_stop_level(config),
            helm_shots=bool(option.holistic_helm_shots or ini_flag(config, "holistic_helm_shots")),
        )


def _stop_level(config: pytest.Config) -> float:
    """``--holistic-stop-level``: a confidence level in (0.5, 1); below one half a "decided" gate means little."""
    level = pick(config, config.option.holistic_stop_level, "--holistic-stop-level", "holistic_stop_level")
    try:
        value = float(level.text)
    except ValueError:
        value = math.nan
    if not 0.5 < value < 1.0:
        raise UserError(f"{level.origin} = {level.text!r} is not a confidence level in (0.5, 1); use e.g. 0.95 or 0.99")
    return value


def _folder(config: pytest.Config, given: str | None, flag: str, ini_name: str) -> Path | None:
    """A folder from the command line (relative to where pytest was started) or the ini file (relative to it)."""
    if given is not None:
        if not given.strip():
            raise UserError(f"{flag} is empty; pass a folder, or leave the option out for the default")
        path = config.invocation_params.dir / Path(given).expanduser()
        _check_folder(path, flag)
        return path
    if config.getini(ini_name):
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        path = base / Path(config.getini(ini_name)).expanduser()
        _check_folder(path, ini_origin(config, ini_name))
        return path
    return None


def _check_folder(path: Path, origin: str) -> None:
    """A folder that can never be created or reached: say so now, not as a traceback at the first write.

    That is a file (or a path under one), a broken symbolic link on the way, or a folder on the way that
    this user may not look into (``exists()`` raises instead of answering).
    """
    for candidate in (path, *path.parents):
        problem = None
        try:
            if candidate.exists():
                if candidate.is_dir():
                    return
                where = "is a file" if candidate == path else f"lies under {candidate}, which is a file"
                problem = f"{path} {where}, not a folder; pass a folder path"
            elif candidate.is_symlink():
                where = "is" if candidate == path else f"goes through {candidate}, which is"
                problem = (
                    f"{path} {where} a broken symbolic link (to {os.readlink(candidate)}); "
                    "create the link's target or pass another folder"
                )
        except OSError as error:
            problem = f"cannot look up {candidate}: {error.strerror or error}; pass a folder this user can reach and write to"
        if problem is not None:
            raise UserError(f"{origin}: {problem}")


def _data_dir(config: pytest.Config) -> Path | None:
    """``--holistic-data-dir``: an existing folder (a missing one is a typo, not an empty collection of copies)."""
    folder = _folder(config, config.option.holistic_data_dir, "--holistic-data-dir", "holistic_data_dir")
    if folder is not None and not folder.is_dir():
        origin = "--holistic-data-dir" if config.option.holistic_data_dir is not None else ini_origin(config, "holistic_data_dir")
        raise UserError(f"{origin}: {folder} does not exist; create it and put dataset copies under it (DIR/org/name/)")
    return folder.resolve() if folder is not None else None


def _word_lists(config: pytest.Config) -> WordLists | None:
    """``--holistic-word-lists``: the user's copies of HELM's word-list files, found and parsed now (every process)."""
    from .perturbations.wordlists import find

    given = config.option.holistic_word_lists
    folder = _folder(config, given, "--holistic-word-lists", "holistic_word_lists")
    if folder is None:
        return None
    origin = "--holistic-word-lists" if given is not None else ini_origin(config, "holistic_word_lists")
    return find(folder.resolve(), origin)


def _positive(value: object, origin: str, fix: str) -> int:
    """A whole number >= 1 from an option or ini value (``0`` is refused, never read as 'not given')."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.lstrip("+").isdigit():
        raise UserError(f"{origin} = {value!r}: must be a whole number >= 1 {fix}".rstrip())
    number = int(text)
    if number < 1:
        raise UserError(f"{origin} = {number}: must be a whole number >= 1 {fix}".rstrip())
    return number


def _model_spec(config: pytest.Config) -> str:
    given = pick(config, config.option.holistic_model, "--model", "holistic_model")
    spec = given.text
    if not spec:
        raise UserError(f"{given.origin} is empty; pass {MODEL_FORMS}, or leave it out for the default {DEFAULT_MODEL}")
    return spec


def _revision(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise UserError("--holistic-model-revision is empty; pass a branch, tag or commit, or leave the option out")
    return None if value is None else value.strip()


def _device(value: str | None) -> str:
    device = "auto" if value is None else value.strip()
    if not _DEVICE.fullmatch(device):
        raise UserError(f"--holistic-device = {value!r}: use auto, cpu, cuda, cuda:N (N = 0, 1, ...) or mps")
    return device


def _shard_size(given: Given, options: ModelOptions) -> int:
    """Items per shard; ``auto``: 64 on CPU, and on a GPU several full batches (4 x the batch size, or 512).

    Decided from the options and the visible GPUs alone, so the xdist controller and every worker agree.
    """
    text = str(given.value).strip()
    if text != "auto":
        value = int(text) if re.fullmatch(r"[+-]?\d+", text) else given.value
        return _positive(value, given.origin, "(items per shard) or auto")
    on_gpu = options.device.startswith("cuda") or (options.device == "auto" and _devices.cuda_device_count() > 0)
    if not on_gpu:
        return 64
    return max(64, 4 * options.batch_size) if options.batch_size else 512


def _fraction(value: float | None) -> float:
    if value is None:
        return 0.0
    if not math.isfinite(value) or not 0 < value <= 1:
        raise UserError(
            f"--holistic-check-determinism = {value!r}: give the fraction of items to re-score alone, above 0 and at most 1 "
            "(e.g. 0.05)"
        )
    return float(value)


def _path(config: pytest.Config, given: str | None) -> Path | None:
    """A path given on the command line, relative to where pytest was started."""
    if given is None:
        return None
    return config.invocation_params.dir / Path(given).expanduser()


def _exports(config: pytest.Config, known: tuple[str, ...]) -> tuple[str, ...]:
    """``--holistic-export`` (or the ini's ``holistic_export`` lines): formats of registered export writers (``known``),
    each once; the command line wins."""
    given = config.option.holistic_export
    origin = "--holistic-export" if given else ini_origin(config, "holistic_export")
    names = [name.strip() for name in (given or config.getini("holistic_export"))]
    for name in names:
        if name not in known:
            raise UserError(f"{origin} = {name!r} is not a known format; use {' or '.join(known)}")
    return tuple(dict.fromkeys(names))


def _perturb(given: list[str]) -> tuple[str, ...]:
    """The names of ``--holistic-perturb`` (comma-separated, repeatable), each checked against the catalog."""
    from .perturbations.catalog import resolve, split_names

    names = tuple(name for text in given for name in split_names(text))
    if given and not names:
        raise UserError("--holistic-perturb is empty; name perturbations such as robustness,fairness or typos_hard")
    try:
        resolve(names)
    except UserError as error:
        raise UserError(f"--holistic-perturb: {error}") from None
    return names


def check_device(device: str) -> None:
    """Refuse a device this machine does not have, once and before any item (not at every load).

    Decided cheaply: through torch when something already imported it, else from ``CUDA_VISIBLE_DEVICES``
    and nvidia-smi's list (a machine without nvidia-smi has no CUDA GPU for our purposes).
    """
    if device.startswith("cuda"):
        count = _devices.cuda_device_count()
        index = int(device.split(":")[1]) if ":" in device else 0
        if count == 0:
            raise UserError(f"--holistic-device = {device!r}: this machine has no visible CUDA GPU; use cpu or auto")
        if index >= count:
            raise UserError(
                f"--holistic-device = {device!r}: only {count} CUDA GPU(s) are visible (cuda:0 to cuda:{count - 1}); "
                "pick one of them, or use cuda or auto"
            )
    elif device == "mps" and not _mps_available():
        raise UserError("--holistic-device = 'mps': Apple's MPS backend is not available on this machine; use cpu or auto")


def _mps_available() -> bool:
    torch = sys.modules.get("torch")
    if torch is not None:
        return bool(torch.backends.mps.is_available())
    return sys.platform == "darwin" and platform.machine() == "arm64"


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
