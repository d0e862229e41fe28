"""Whether this session has holistic work, and waking the plugin's parts when it has.

pytest loads the plugin in every run of every project where it is installed, and such a run must stay as it was:
nothing of the package imported beyond the option declarations, nothing written, nothing printed, xdist's own
scheduling. So the session's parts (the settings, the worker side, and on the controller the reporter, its writers
and the xdist glue: ``configure.py``) are built only once the session shows holistic work:

- at configure, when the user gave any of the plugin's options or ini keys, so a bad value is still a usage error
  before collection;
- else at the first eval met: a function marked ``holistic`` being collected, or one of the plugin's fixtures used;
- on an xdist controller, which collects nothing, when the workers' collections are in and one of them woke (a
  worker that wakes writes its ledger at once, into the folder the controller named), or when a worker's report
  carries a record. Until then the controller schedules as xdist does; from then on by shards.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import pytest

from ._roles import LEDGER, STOPS, Planned, is_worker

if TYPE_CHECKING:
    from .worker import WorkerSide

WORKER_SIDE = pytest.StashKey["WorkerSide"]()
"""On the config, once the session is awake: this process's worker side."""
CONTROLLER = pytest.StashKey[bool]()
"""On the config from the start: whether this process is the controller (or a plain run), not an xdist worker."""
DORMANT_GLUE = "holistic-dormant"
"""The plugin name of :class:`DormantController` in pytest's plugin manager."""
RECORD, OUTPUT = "holistic_record", "holistic"
"""``channels.RECORD`` and ``channels.OUTPUT`` (a test holds them equal): what shows a worker had holistic work,
named here so that a session without any loads no channel code."""


def start(config: pytest.Config) -> None:
    """At configure: wake now if the user gave any option of ours; else wait, watching xdist's workers if any."""
    from .extensions import session_extensions

    config.stash[CONTROLLER] = controller = not is_worker(config)  # the role, read once
    if session_extensions(config).given(config):
        wake(config)
    elif controller:
        xdist = config.pluginmanager.hasplugin("xdist")
        config.pluginmanager.register(DormantXdistController(config) if xdist else DormantController(config), DORMANT_GLUE)


def awake(config: pytest.Config) -> WorkerSide | None:
    """This process's worker side, or None while the session has shown no holistic work."""
    return config.stash.get(WORKER_SIDE, None)


def wake(config: pytest.Config) -> WorkerSide:
    """The worker side, the session's parts built first if they are not yet (see the module's docstring)."""
    side = awake(config)
    if side is None:
        from .configure import configure

        glue = config.pluginmanager.get_plugin(DORMANT_GLUE)
        planned = glue.planned if isinstance(glue, DormantXdistController) else None
        side = configure(config, config.stash[CONTROLLER], planned)
        config.stash[WORKER_SIDE] = side
    return side


def close(config: pytest.Config) -> None:
    """At unconfigure: the session's parts closed, if it ever woke."""
    side = config.stash.get(WORKER_SIDE, None)
    if side is not None:
        from .configure import unconfigure

        del config.stash[WORKER_SIDE]
        unconfigure(config, side)


class DormantController:
    """The controller's stand-in while the session shows no holistic work. A reporter made during the test loop (a
    fixture of ours first used by a test, or under xdist the workers' collections) missed the loop's start, so this
    glue ends the loop for it (``Reporter.loop_failed`` and ``loop_finished``); it also removes the folder it named
    for worker ledgers if the session never woke."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.planned = Planned()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        woke_in_loop = awake(self.config) is None
        try:
            result = yield
        except BaseException as stop:
            if woke_in_loop and (reporter := _reporter(self.config)) is not None:
                reporter.loop_failed(stop)
            raise
        if woke_in_loop and (reporter := _reporter(self.config)) is not None:
            reporter.loop_finished(session)
        return result

    def pytest_unconfigure(self) -> None:
        if awake(self.config) is None:
            self.planned.remove()  # a worker may have woken late; an awake session's reporter removes the folder


class DormantXdistController(DormantController):
    """Under xdist: names the workers' inputs, lets xdist schedule until every collection is in, and wakes the
    session then if a worker woke, scheduling by shards from there on."""

    def __init__(self, config: pytest.Config) -> None:
        super().__init__(config)
        self.first_collection: tuple[Any, list[str]] | None = None

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[LEDGER] = str(self.planned.ledger_folder)
        node.workerinput[STOPS] = {"path": str(self.planned.stop_table), "session": self.planned.stops_session}

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "load" or awake(config) is not None:
            return None  # another distribution mode is xdist's; an awake session's glue schedules by shards
        from xdist.scheduler import LoadScheduling

        return DeferredScheduling(LoadScheduling(config, log), lambda: self._sharded(log))

    def _sharded(self, log: Any) -> Any | None:
        """Once every collection is in: the shard scheduler if a worker woke (the session woken with it), else None."""
        if not self.planned.some_worker_woke():
            return None
        self._wake()
        from ._xdist import ShardScheduling

        return ShardScheduling(self.config, log, wake(self.config).settings.shard_size)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.first_collection is None:
            self.first_collection = (node, list(ids))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A record from a worker that woke after collection (a fixture of ours in a test without the marker)."""
        if awake(self.config) is None and getattr(report, RECORD, None) is not None:
            glue = self._wake()
            if glue is not None:
                glue.pytest_runtest_logreport(report)  # registered during this call: pluggy does not call it now

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """A worker's output, when only it shows holistic work: relayed once the session is awake."""
        if awake(self.config) is None and OUTPUT in (getattr(node, "workeroutput", None) or {}):
            glue = self._wake()
            if glue is not None:
                glue.pytest_testnodedown(node, error)

    def _wake(self) -> Any:
        """Wake the session and hand its xdist glue the first collection, which it missed; returns the glue."""
        if awake(self.config) is not None:
            return None
        wake(self.config)
        glue = self.config.pluginmanager.get_plugin("holistic-xdist")
        if glue is not None and self.first_collection is not None:
            glue.pytest_xdist_node_collection_finished(*self.first_collection)
        return glue


def _reporter(config: pytest.Config) -> Any:
    """The reporter of a session that woke (a session that never did imports nothing more here)."""
    if awake(config) is None:
        return None
    from .report.reporter import REPORTER

    return config.stash.get(REPORTER, None)


class DeferredScheduling:
    """xdist's scheduling protocol, decided when every worker's collection is in (the first ``schedule``): the
    scheduler ``decide`` returns, else ``plain``. Until then both hear of every worker and collection."""

    def __init__(self, plain: Any, decide: Callable[[], Any | None]) -> None:
        self._plain = plain
        self._decide = decide
        self._chosen: Any | None = None
        self._early: list[tuple[str, tuple[Any, ...]]] = []  # calls before the decision, replayed to a late choice

    def schedule(self) -> None:
        if self._chosen is None:
            chosen = self._decide()
            if chosen is not None:
                for name, arguments in self._early:
                    getattr(chosen, name)(*arguments)
            self._chosen = chosen if chosen is not None else self._plain
        self._chosen.schedule()

    def add_node(self, node: Any) -> None:
        self._before("add_node", node)

    def add_node_collection(self, node: Any, collection: Any) -> None:
        self._before("add_node_collection", node, collection)

    def remove_node(self, node: Any) -> str | None:
        if self._chosen is None:
            self._early.append(("remove_node", (node,)))
            result: str | None = self._plain.remove_node(node)
            return result
        found: str | None = self._chosen.remove_node(node)
        return found

    def _before(self, name: str, *arguments: Any) -> None:
        if self._chosen is None:
            self._early.append((name, arguments))
            getattr(self._plain, name)(*arguments)
        else:
            getattr(self._chosen, name)(*arguments)

    def __getattr__(self, name: str) -> Any:
        """Everything else (``nodes``, ``collection_is_completed``, ``mark_test_complete``, ...) is the chosen one's,
        xdist's own before the choice."""
        return getattr(self._chosen if self._chosen is not None else self._plain, name)
