"""Configuring a session: the role decided once, the settings read, each process's worker side and outbox, and on
the controller the reporter, its writers and the xdist glue.

Loaded by ``plugin.pytest_configure``, not when pytest imports the plugin: pytest imports every installed plugin
in every run, so the plugin module itself stays small and this one (and all it imports) loads when a session
is configured.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._roles import ENGINE, STOPS, Planned
from .channels import InProcess, XdistWorker
from .errors import UserError
from .extensions import session_extensions
from .gates import check_metric_name
from .models import cache as response_cache
from .models.engine import EngineSession
from .printable import printable
from .progress import ModelProgress, terminal_emitter
from .progress.durations import ItemSeconds
from .report.json_report import new_run_id
from .report.ledger import Ledgers
from .report.outputs import Writer
from .report.regression import ComparisonPlan, comparison_plan
from .report.reporter import REPORTER, Reporter
from .settings import Settings, check_device, check_writable
from .stops import FILE_NAME as STOP_TABLE
from .stops import StopTable
from .worker import WorkerSide, gate_metric_names, prepare_worker
from .writer_kinds import WriterContext, wanted_writers


def configure(config: pytest.Config, controller: bool, planned: Planned | None = None) -> WorkerSide:
    """Read the settings (a bad one is a usage error, before any model work) and give this process its parts; returns
    its worker side (``activation`` keeps it on the config).

    ``planned``: the worker ledgers' folder and the early-stop table an xdist controller named to its workers before
    the session woke (``activation``), used instead of new ones."""
    try:
        settings = Settings.from_config(config, session_extensions(config))
        for gate in settings.gates:
            check_metric_name(gate, gate_metric_names(settings.scored), f"from the {gate.origin}")
        if controller and not config.option.collectonly:
            check_writable(settings.report_dir)
            check_device(settings.model_options.device)
        plan = (
            comparison_plan(settings.baseline, settings.fail_on_regression) if controller else None
        )  # the baseline, read and checked before any model work
    except UserError as error:
        raise pytest.UsageError(printable(f"pytest-holistic: {error}")) from None
    if not controller:
        prepare_worker(config, settings)
        # A worker never computes ahead (it does not know which shard it runs next) and its lines never reach the terminal.
        given = config.workerinput.get(STOPS)  # type: ignore[attr-defined]
        stops = StopTable(Path(given["path"]), str(given["session"])) if given else None
        engine = config.workerinput.get(ENGINE)  # type: ignore[attr-defined]
        shared = EngineSession(Path(engine)) if engine else None
        side = WorkerSide(config, settings, XdistWorker(config), stops=stops, engine=shared)
        side.announce()
        return side
    if settings.cache_dir is not None and getattr(config.option, "cacheclear", False):
        problem = response_cache.clear(settings.cache_dir)
        if problem:
            config.issue_config_time_warning(pytest.PytestConfigWarning(f"pytest-holistic: {problem}"), stacklevel=2)
    terminal = terminal_emitter(config)  # this process owns the terminal: say what the model does
    progress = ModelProgress(*terminal) if terminal is not None else None
    run_id = new_run_id()
    if planned is not None:
        ledgers = Ledgers(planned.ledger_folder)
        stops = StopTable(planned.stop_table, planned.stops_session)
    else:
        ledgers = Ledgers()
        # Beside the response cache, which every worker reaches; without a cache, in the session's own folder of ledgers.
        stops = StopTable((settings.cache_dir or ledgers.folder()) / STOP_TABLE, run_id)
    side = WorkerSide(config, settings, InProcess(config), settings.overlap, progress, stops)
    engine = side.start_engine() if not config.option.collectonly else None
    _configure_reporter(config, settings, plan, run_id, ledgers, stops, engine.folder if engine is not None else None)
    return side


def _configure_reporter(
    config: pytest.Config,
    settings: Settings,
    plan: ComparisonPlan | None,
    run_id: str,
    ledgers: Ledgers,
    stops: StopTable,
    engine_folder: Path | None = None,
) -> None:
    """The controller's reporter and, with xdist, its glue; both are given the one folder of worker ledgers and the
    early-stop table, and the glue the session's engine, for the workers."""
    from .scrubbing import scrub_text

    shown = scrub_text(settings.model)  # a spec with a URL's password or a key in it is never written or printed
    context = WriterContext(settings.report_dir, shown, run_id, settings.exports, settings.values)
    writers: list[Writer] = wanted_writers(settings.writers, context)  # each registered kind that is wanted, in order
    reporter = Reporter(
        config,
        shown,
        settings.gates,
        writers,
        strict_gates=settings.strict_gates,
        run_id=run_id,
        source=settings.source,
        comparison=plan,
        ledgers=ledgers,
        scored=settings.scored,
        stops=stops,
        stop_level=settings.stop_level,
    )
    config.stash[REPORTER] = reporter
    reporter.handle_sigterm()
    config.pluginmanager.register(reporter, "holistic-reporter")
    config.pluginmanager.register(ItemSeconds(config), "holistic-item-seconds")
    if config.pluginmanager.hasplugin("xdist"):
        from ._xdist import XdistController

        config.pluginmanager.register(XdistController(config, settings.shard_size, ledgers.folder, stops, engine_folder), "holistic-xdist")


def unconfigure(config: pytest.Config, worker: WorkerSide) -> None:
    """Close the reporter (and unregister it and the xdist glue), then the worker side and its model."""
    reporter = config.stash.get(REPORTER, None)
    if reporter is not None:
        del config.stash[REPORTER]
        reporter.close()
        config.pluginmanager.unregister(reporter)
        for name in ("holistic-xdist", "holistic-item-seconds"):
            glue = config.pluginmanager.get_plugin(name)
            if glue is not None:
                config.pluginmanager.unregister(glue)
    worker.close()
