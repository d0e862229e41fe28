"""Every pytest hook and fixture of pytest-holistic: thin shells that delegate to the two roles.

Every process of a session with holistic work has a ``WorkerSide`` (items, the cached model, records); only the
controller (or a plain run) has a ``Reporter`` (aggregation, gates, writers), as pytest's own junitxml does it. The
role is decided once, in ``configure.py``, and with it the outbox a process sends through (``channels``).
pytest imports this module in every run of every project where the plugin is installed, so it imports almost
nothing, and a session with no eval in it stays that way (``activation.py``): its parts are built when the session
first shows holistic work, and torch, transformers and datasets load only when a model or a hub dataset is needed.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest


from .activation import awake, close, wake

if TYPE_CHECKING:
    from .answers import AnswerProbe
    from .extensions import Extensions
    from .models.cached import CachedModel
    from .plans import Completion
    from .worker import Recorder, WorkerSide
    from .writer_kinds import WriterKind

MARKER_HELP = "holistic(scenario, adapter=..., metrics=..., gates=...): evaluate a model on every instance of the scenario"
SELECTION_MARKERS = {
    "helm_core": "one of HELM's 16 core scenarios (Table 4): select with -m helm_core",
    "helm_targeted": "one of HELM's targeted evaluations (bias, toxicity, knowledge, reasoning, ...): -m helm_targeted",
    "helm_lite": "one of HELM Lite's scenarios (its current leaderboard): select with -m helm_lite",
    "mathematical_reasoning": "task: mathematical reasoning (HELM Lite's MATH and GSM8K)",
    "legal": "task: legal reasoning (HELM Lite's LegalBench)",
    "medicine": "task: medical question answering (HELM Lite's MedQA)",
    "machine_translation": "task: machine translation (HELM Lite's WMT 2014)",
    "question_answering": "task: question answering (core) or knowledge (targeted)",
    "summarization": "task: summarization",
    "information_retrieval": "task: information retrieval",
    "sentiment_analysis": "task: sentiment analysis",
    "toxicity_detection": "task: toxicity detection",
    "text_classification": "task: miscellaneous text classification",
    "language_modeling": "language modeling (targeted)",
    "reasoning": "reasoning (targeted)",
    "bias": "bias and stereotypes (targeted)",
    "toxicity": "toxicity of generated text (targeted)",
}
"""Markers a suite file puts in ``pytestmark`` so that ``-m "helm_core and not summarization"`` selects scenarios."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspec

    pluginmanager.add_hookspecs(hookspec)


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    from .extensions import PLUGIN_NAME, Extensions

    extensions = Extensions(parser, _builtin_writers)  # every option of the core and of the built-in metrics and backends
    pluginmanager.register(extensions, PLUGIN_NAME)
    pluginmanager.hook.pytest_holistic_register.call_historic(kwargs={"extensions": extensions})


def _builtin_writers() -> tuple[WriterKind, ...]:
    """The built-in report writers, loaded when the session's settings are read (``extensions`` cannot import the
    report package: it is a layer below)."""
    from .report.builtin_writers import BUILTIN_WRITERS

    return BUILTIN_WRITERS


@pytest.hookimpl(tryfirst=True)
def pytest_holistic_register(extensions: Extensions) -> None:
    """The backends installed packages name as entry points (the built-in metrics and backends join the session when
    its settings are read, ahead of these)."""
    from importlib.metadata import entry_points

    from .command_line import ENTRY_POINT_GROUP

    if entry_points(group=ENTRY_POINT_GROUP):
        from .models.registry import entry_point_kinds

        for kind in entry_point_kinds():
            extensions.add_backend(kind)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    for name, meaning in SELECTION_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
    from .activation import start

    start(config)  # the session's parts now if an option of ours was given, else at the first eval


def pytest_unconfigure(config: pytest.Config) -> None:
    close(config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    side = awake(metafunc.config)
    if side is None and metafunc.definition.get_closest_marker("holistic") is not None:
        side = _wake_in_collection(metafunc.config)
    if side is not None:
        side.parametrize(metafunc)


class SettingsProblem(pytest.Collector.CollectError):
    """A setting that fails when a marked function wakes the session (the default report folder is a file): pytest
    shows a collection error's message alone, one line, and the run ends with the usage error's status."""


WAKE_FAILED = pytest.StashKey[str]()


def _wake_in_collection(config: pytest.Config) -> WorkerSide:
    """Woken by the first marked function; a setting that fails is each marked file's one-line collection error."""
    try:
        return wake(config)
    except pytest.UsageError as error:
        config.stash[WAKE_FAILED] = str(error)
        raise SettingsProblem(str(error)) from None


def pytest_collection_finish(session: pytest.Session) -> None:
    side = awake(session.config)
    if side is not None:
        side.register(session.items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.excinfo is not None:
        from .errors import UserError

        if call.excinfo.errisinstance(UserError):
            report.longrepr = _user_error_line(call.excinfo)
    if call.excinfo is not None and call.excinfo.errisinstance(KeyboardInterrupt):
        return report  # cut off mid-item (Ctrl-C, SIGTERM): no outcome to record; the report lists it as not completed
    side = awake(item.config)
    if side is not None:
        side.attach_record(item, report)
    return report


def _user_error_line(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """A user mistake met inside a test (a bad model behind ``holistic_model``): one line and where, no traceback."""
    from .printable import printable

    package = Path(__file__).parent
    outside = [entry for entry in excinfo.traceback if package not in Path(entry.path).parents]
    where = f"{Path(outside[-1].path).name}:{outside[-1].lineno + 1}: " if outside else ""
    return printable(f"pytest-holistic: {where}{excinfo.value}")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Before the reporter writes: this process's summary goes out (to workeroutput, or straight to the reporter).

    A run cut short (Ctrl-C, SIGTERM) first cancels what the model still has in flight, so a request hung on a
    server neither holds the report back nor is counted after the summary is taken.
    """
    worker = awake(session.config)
    if worker is None:
        if WAKE_FAILED in session.config.stash:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        worker.cancel()
    worker.finish()


@pytest.fixture
def instance(request: pytest.FixtureRequest) -> Any:
    """The eval instance of this item (parametrized by ``@pytest.mark.holistic``)."""
    pytest.fail("the `instance` fixture only exists in tests marked @pytest.mark.holistic(scenario)", pytrace=False)


@pytest.fixture
def completion(request: pytest.FixtureRequest) -> Completion:
    """The model's answer to this item's instance, computed with the rest of its shard in batches."""
    return wake(request.config).answer(request.node).completion


@pytest.hookimpl(trylast=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Compute the answer in setup for every holistic item, so a model failure is an error outcome.

    A hook after the item's fixtures rather than an autouse fixture: a fixture is set up for every test of the
    session, holistic or not (about 0.1 ms each, a ``request`` object and a finalizer); this costs a stash lookup.
    Under ``--setup-plan`` nothing is set up, so nothing is computed either (as no fixture would have been).
    """
    side = awake(item.config)
    if side is None:
        return
    from .worker import ITEM_WORK

    if ITEM_WORK in item.stash and not getattr(item.config.option, "setupplan", False):
        side.answer(item)


@pytest.fixture
def record(request: pytest.FixtureRequest) -> Recorder:
    """Record per-instance scores; they appear in the summary table, gates and report.json."""
    wake(request.config)
    from .worker import ITEM_SCORES, Recorder

    return Recorder(request.node.stash.setdefault(ITEM_SCORES, {}))


@pytest.fixture
def answer(request: pytest.FixtureRequest) -> AnswerProbe:
    """``answer(text)``: the model's answer to any input, with this item's prompt layout and few-shot examples.

    For property tests: ``@given(text=typos(of=instance.input))`` then ``assert answer(text).text == completion.text``.
    Answers go through the response cache; when the test fails, the last perturbed input and both answers
    (Hypothesis' minimal counterexample) go into the item's record and report.json.
    """
    return wake(request.config).probe(request.node)


@pytest.fixture(scope="session")
def holistic_model(request: pytest.FixtureRequest) -> CachedModel:
    """The model under test behind the response cache: ``generate([...])`` and ``loglikelihood([...])`` on demand.

    Loads nothing until called; a request already answered (by a shard, a rerun or an earlier call) comes
    from the cache. For property tests and fixtures that need the model outside the precomputed shards.
    """
    return wake(request.config).model
