"""The core's command-line options and ini keys, declared at every pytest start.

pytest must know every option before it parses the command line, also in a run with no eval in it, so this module
imports nothing but pytest and the option machinery; the values are read and checked in ``settings.py`` only in a session with holistic
work. :class:`Declared` remembers what was declared, so the plugin can tell whether the user gave any of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import options
from .errors import UserError
from .options import Given, Option

DEFAULT_MODEL = "smollm2-135m"
"""The model a run evaluates when none is named: the embedded SmolLM2-135M-Instruct."""
MODEL_FORMS = "a hub name (gpt2-large), a local folder, scripted:PATH"
"""What ``--model`` takes, for its help and its errors (besides the default)."""
SOURCES = ("local", "hub", "auto")
"""``local``: the shipped files; ``hub``: the real dataset (or an error); ``auto``: the real one where it can be read."""
ENTRY_POINT_GROUP = "pytest_holistic.models"
"""The entry point group under which an installed package names a model backend (``models/registry.py``)."""
EXPORT_MODULE_PREFIX = "export_"
"""A module ``report/export_NAME.py`` is the built-in export format NAME (underscores written as dashes)."""


def export_formats(report_folder: Path = Path(__file__).parent / "report") -> tuple[str, ...]:
    """The built-in formats ``--holistic-export`` can write besides report.json, read from the report folder's file
    names: pytest prints the help at every start, when no writer may be loaded (a session with no eval imports
    almost nothing of the package), and a new format is then its one module. The formats a value is checked against
    are the registered export kinds (these and any a plugin adds), read with the settings."""
    names = (path.stem.removeprefix(EXPORT_MODULE_PREFIX) for path in report_folder.glob(f"{EXPORT_MODULE_PREFIX}*.py"))
    return tuple(sorted(name.replace("_", "-") for name in names if name.isidentifier()))


def _junit_path(given: Given) -> Path | None:
    """``--holistic-junit``: a file to write, refused now if it is empty or an existing folder (as ``--junitxml``)."""
    if given.value is None:
        return None
    text = str(given.value)
    if not text.strip():
        raise UserError("--holistic-junit is empty; name the XML file to write, e.g. reports/junit.xml")
    path = given.base / Path(text).expanduser()
    if path.is_dir():
        raise UserError(f"--holistic-junit {text}: is a folder; name the XML file to write, e.g. {Path(text) / 'junit.xml'}")
    return path


JUNIT = Option(
    "--holistic-junit",
    "also write a JUnit XML file for CI test reporters: one testcase per item and per gate, metrics as properties",
    _junit_path,
    metavar="PATH",
)
"""The option of the built-in JUnit writer (``report/builtin_writers.py``), a core option declared among the others."""


class Declared:
    """Options and ini keys declared in pytest's ``holistic`` group, each flag's default kept beside its name."""

    def __init__(self, parser: pytest.Parser) -> None:
        self._parser = parser
        self._group = parser.getgroup("holistic", "holistic language-model evaluation")
        self.defaults: dict[str, Any] = {}  # dest -> default
        self.ini_defaults: dict[str, Any] = {}  # ini key -> default

    def flag(self, *names: str, **attrs: Any) -> None:
        self._group.addoption(*names, **attrs)
        self.defaults[attrs["dest"]] = attrs.get("default")

    def ini(self, name: str, help: str, **attrs: Any) -> None:
        self._parser.addini(name, help, **attrs)
        self.ini_defaults[name] = attrs.get("default")

    def option(self, option: Option[Any]) -> None:
        """An option a metric or a backend declares (``options.Option``), with its ini key if it has one."""
        options.declare(self._parser, option)
        self.defaults[option.dest] = False if option.switch else None
        if option.ini is not None:
            self.ini_defaults[option.ini] = option.default or ""

    def given(self, config: pytest.Config) -> list[str]:
        """The declared options the user gave a value other than their default: on the command line, or as an ini key
        (in the ini file or with ``-o``)."""
        found = [dest for dest, default in self.defaults.items() if getattr(config.option, dest, default) != default]
        for key, default in self.ini_defaults.items():
            try:
                if config.getini(key) != default:
                    found.append(key)
            except (ValueError, pytest.UsageError):  # set, but not readable (a bool ini key = maybe): the settings say so
                found.append(key)
        return found


def add_options(parser: pytest.Parser) -> Declared:
    """Declare the core's options and ini keys (group ``holistic``); returns what was declared."""
    declared = Declared(parser)
    group = declared
    declared.flag(
        "--model",
        "--holistic-model",
        dest="holistic_model",
        default=None,
        metavar="NAME_OR_PATH",
        help=f"model to evaluate: {MODEL_FORMS}, or {DEFAULT_MODEL} (default)",
    )
    declared.flag(
        "--holistic-gate",
        dest="holistic_gates",
        action="append",
        default=[],
        metavar="EXPR",
        help="scenario-level threshold '[scenario:]metric OP number', e.g. 'boolq:quasi_exact_match>=0.6' (repeatable)",
    )
    declared.flag(
        "--holistic-report-dir",
        dest="holistic_report_dir",
        default=None,
        metavar="DIR",
        help="where report.json is written (default: ./reports)",
    )
    declared.flag(
        "--holistic-source",
        dest="holistic_source",
        default=None,
        choices=SOURCES,
        help="read scenarios from their shipped files (local, default), the real dataset (hub), or the real one where it "
        "can be read and the shipped files elsewhere (auto)",
    )
    declared.flag(
        "--holistic-data-dir",
        dest="holistic_data_dir",
        default=None,
        metavar="DIR",
        help="local copies of hub datasets in their real schema, read instead of the hub: DIR/org/name/ (e.g. DIR/google/boolq/)",
    )
    declared.flag(
        "--holistic-max-instances",
        dest="holistic_max_instances",
        type=int,
        default=None,
        metavar="N",
        help="evaluate at most N instances per scenario (seeded sample)",
    )
    declared.flag(
        "--holistic-batch-size",
        dest="holistic_batch_size",
        default=None,
        metavar="N|auto",
        help="contexts (or prompts) per forward pass; auto: 8 on CPU, from free memory on GPU",
    )
    declared.flag(
        "--holistic-cache-dir",
        dest="holistic_cache_dir",
        default=None,
        metavar="DIR",
        help="response cache shared by all workers (default: <report dir>/.cache); --cache-clear empties it",
    )
    declared.flag(
        "--holistic-no-cache",
        dest="holistic_no_cache",
        action="store_true",
        default=False,
        help="neither read nor write the response cache",
    )
    declared.flag(
        "--holistic-shard-size",
        dest="holistic_shard_size",
        default=None,
        metavar="N|auto",
        help="items of one test function batched together and sent to one xdist worker (auto: 64 on CPU, 512 on a GPU)",
    )
    declared.flag("--holistic-device", dest="holistic_device", default=None, help="auto (default), cpu, cuda, cuda:N or mps")
    declared.flag("--holistic-model-revision", dest="holistic_model_revision", default=None, help="hub revision of --model")
    declared.flag(
        "--holistic-overlap",
        dest="holistic_overlap",
        default=None,
        choices=("auto", "on", "off"),
        help="compute the next shard while pytest runs the items of this one (auto: on a GPU, without -n; a served model's shards side by side, without -n)",
    )
    declared.flag(
        "--holistic-check-determinism",
        dest="holistic_check_determinism",
        type=float,
        default=None,
        metavar="FRACTION",
        help="re-score this seeded fraction of items alone (batch size 1) and fail those whose answer changes",
    )
    declared.flag(
        "--holistic-perturb",
        dest="holistic_perturb",
        action="append",
        default=[],
        metavar="NAMES",
        help="add perturbed variants of every instance: robustness, fairness, equivariance, fmeval, or presets such as "
        "typos_hard, dialect (comma-separated, repeatable); a marker with perturbations=False opts out",
    )
    declared.flag(
        "--holistic-word-lists",
        dest="holistic_word_lists",
        default=None,
        metavar="DIR",
        help="read HELM's own word lists from DIR (any of SAE_to_AAVE_mapping.json, person_names.txt, "
        "correct_to_misspelling.json, directly or in HELM's benchmark_output layout) instead of the project's, "
        "so dialect, person names and misspellings give HELM's exact variants",
    )
    declared.option(JUNIT)
    declared.flag(
        "--holistic-export",
        dest="holistic_export",
        action="append",
        default=[],
        metavar="FORMAT",
        help=f"also write the results in another tool's format, next to report.json: {', '.join(export_formats())} (repeatable)",
    )
    declared.flag(
        "--holistic-baseline",
        dest="holistic_baseline",
        default=None,
        metavar="REPORT_JSON",
        help="compare this run with a stored report.json instance by instance (paired statistics)",
    )
    declared.flag(
        "--holistic-fail-on-regression",
        dest="holistic_fail_on_regression",
        action="append",
        default=[],
        metavar="METRIC:MARGIN",
        help="with --holistic-baseline: fail when METRIC dropped by more than MARGIN with confidence, e.g. "
        "'quasi_exact_match:0.02' (repeatable)",
    )
    declared.flag(
        "--holistic-strict-gates",
        dest="holistic_strict_gates",
        action="store_true",
        default=False,
        help="a marker or ini gate whose scenario was deselected or not collected fails instead of being reported as not evaluated",
    )
    declared.ini(
        "holistic_strict_gates", "gates that could not be checked fail (see --holistic-strict-gates)", type="bool", default=False
    )
    declared.flag(
        "--holistic-helm-shots",
        dest="holistic_helm_shots",
        action="store_true",
        default=None,
        help="on the shipped offline editions, use HELM's in-context example counts too (the marker's max_train_instances, "
        "not local_max_train_instances): slower on a CPU, but the same prompts as helm-run on the same rows",
    )
    declared.ini(
        "holistic_helm_shots",
        "HELM's in-context counts on the offline editions (see --holistic-helm-shots)",
        type="bool",
        default=False,
    )
    declared.flag(
        "--holistic-stop-early",
        dest="holistic_stop_early",
        action="store_true",
        default=None,
        help="run each gated scenario's items in a seeded random order and stop it once every gate on it is decided by an "
        "anytime-valid confidence sequence; the items left are reported as skipped (a marker's stop_early=False opts out)",
    )
    declared.flag(
        "--holistic-stop-level",
        dest="holistic_stop_level",
        default=None,
        metavar="LEVEL",
        help="confidence level of the sequences that stop a scenario early, in (0.5, 1) (default 0.95)",
    )
    declared.ini("holistic_stop_early", "stop gated scenarios early (see --holistic-stop-early)", type="bool", default=False)
    declared.ini("holistic_stop_level", "confidence level for stopping early (see --holistic-stop-level)", default="0.95")
    declared.ini("holistic_model", "model to evaluate (see --model)", default=DEFAULT_MODEL)
    declared.ini("holistic_gates", "scenario-level thresholds, one per line", type="linelist", default=[])
    declared.ini("holistic_report_dir", "report folder, relative to the ini file (default: ./reports)", default="")
    declared.ini("holistic_source", "local, hub or auto", default="local")
    declared.ini("holistic_data_dir", "local copies of hub datasets (DIR/org/name/), relative to the ini file", default="")
    declared.ini(
        "holistic_word_lists",
        "folder of HELM's word-list files (see --holistic-word-lists), relative to the ini file",
        default="",
    )
    declared.ini(
        "holistic_export",
        "formats to write besides report.json, one per line (see --holistic-export)",
        type="linelist",
        default=[],
    )
    declared.ini("holistic_batch_size", "contexts or prompts per forward pass, or auto", default="auto")
    declared.ini("holistic_cache_dir", "response cache folder, relative to the ini file", default="")
    declared.ini(
        "holistic_shard_size", "items of one test function batched together and sent to one xdist worker, or auto", default="auto"
    )
    return declared
