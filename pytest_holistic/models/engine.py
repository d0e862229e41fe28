"""An inference engine the session runs as a server of its own (``--model vllm:MODEL``): one per session, shared.

pytest's main process (the controller, or the only process at ``-n 0``) starts a small supervisor at configure
(:mod:`.engine_supervisor`, standard library only), in a session of its own so a terminal's Ctrl-C reaches pytest
and not the engine. The supervisor starts the engine only when a process first needs it (a warm rerun answered
from the cache starts none), waits for it with a deadline, and stops it, with every file of the session, when
pytest says so at the end, or when pytest's main process is gone (a crash, ``kill -9``): no orphan, nothing left.

Every process (each xdist worker, or the only one) talks to the supervisor through one folder:

- ``command.json`` (written by the controller): the engine's command, its environment, its port and deadline;
- ``start`` (made by the first process that needs the engine): start it now;
- ``state.json`` (written by the supervisor): ``ready`` with the address and version, or ``failed`` with one line;
- ``supervisor.pid``, ``engine.log`` (the engine's output, quoted when it fails) and ``tmp/`` (its temporary files).

The engine runs from the controller's environment: an xdist worker's GPU and CPU pinning never reaches it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ModelLoadError

COMMAND_FILE = "command.json"
START_FILE = "start"
STATE_FILE = "state.json"
PID_FILE = "supervisor.pid"
LOG_FILE = "engine.log"
SUPERVISOR_LOG = "supervisor.log"
SUPERVISOR = Path(__file__).with_name("engine_supervisor.py")
"""Run as a script by its path: it imports only the standard library, so it starts in a blink and runs the same code."""
PORT = "{port}"
"""Stands for the port in an engine's command; the supervisor picks a free one when it starts the engine."""
STOP_SECONDS = 30.0
"""How long ``stop`` waits for the supervisor to stop the engine and remove the folder."""


@dataclass(frozen=True)
class EngineCommand:
    """What the supervisor runs: the command (``{port}`` where the port goes), added environment, where it answers."""

    name: str  # "vLLM", in messages
    argv: tuple[str, ...]
    environment: Mapping[str, str] = field(default_factory=dict)
    port: int | None = None  # the user's own port, else None: a free one is picked at start
    ready_path: str = "/health"  # answers 200 once the engine takes requests
    version_path: str | None = None  # answers {"version": ...}
    api_path: str = "/v1"  # the address handed to the client is http://127.0.0.1:PORT + this
    start_timeout: float = 600.0
    probe_argv: tuple[str, ...] = ()  # a quick check run first (is the engine installed?); its output is the failure
    fix: str = ""  # what to do when the engine does not start, appended to the failure line

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "argv": list(self.argv),
            "environment": dict(self.environment),
            "port": self.port,
            "ready_path": self.ready_path,
            "version_path": self.version_path,
            "api_path": self.api_path,
            "start_timeout": self.start_timeout,
            "probe_argv": list(self.probe_argv),
            "fix": self.fix,
        }


@dataclass(frozen=True)
class EngineState:
    """The engine, started: where its API answers, its version, and how long starting took."""

    url: str
    version: str | None
    seconds: float


class EngineSession:
    """The folder through which every process of one pytest session shares one engine.

    The controller makes it with :meth:`start_supervisor` and ends it with :meth:`stop`; every process, the
    controller included, asks for the engine with :meth:`ready`.
    """

    def __init__(self, folder: Path, supervisor: subprocess.Popen[bytes] | None = None) -> None:
        self.folder = folder
        self._supervisor = supervisor  # this process started it (the controller), and stops it

    @property
    def owned(self) -> bool:
        return self._supervisor is not None

    @classmethod
    def start_supervisor(cls, command: EngineCommand) -> EngineSession:
        """A new session folder and its supervisor, watching this process; the engine itself is not started yet."""
        folder = Path(tempfile.mkdtemp(prefix="pytest-holistic-engine-"))
        (folder / COMMAND_FILE).write_text(json.dumps(command.as_json()))
        with (folder / SUPERVISOR_LOG).open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, str(SUPERVISOR), str(folder), str(os.getpid())],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # out of the terminal's process group: Ctrl-C is pytest's to handle
                cwd=folder,
            )
        (folder / PID_FILE).write_text(str(process.pid))
        return cls(folder, process)

    def ready(self, name: str, deadline: float) -> EngineState:
        """The engine's address, asking the supervisor to start it if nobody has; waits at most ``deadline`` seconds.

        Every process that calls this gets the same engine; a start that failed fails every caller with the same line.
        """
        start = self.folder / START_FILE
        if not self.folder.is_dir():
            raise ModelLoadError(f"the {name} engine's session folder {self.folder} is gone: pytest's main process has ended")
        try:
            start.touch(exist_ok=True)
        except OSError as error:
            raise ModelLoadError(f"cannot ask for the {name} engine ({error.strerror}: {start})") from None
        until = time.monotonic() + deadline
        while time.monotonic() < until:
            state = self._state()
            if state is not None:
                if state.get("status") == "ready":
                    version = state.get("version")
                    seconds = state.get("seconds")
                    return EngineState(
                        str(state["url"]),
                        str(version) if version is not None else None,
                        float(seconds) if isinstance(seconds, (int, float)) else 0.0,
                    )
                raise ModelLoadError(str(state.get("line") or f"the {name} engine did not start"))
            if not self._supervisor_alive():
                raise ModelLoadError(
                    f"the {name} engine's supervisor has ended: {_last_line(self.folder / SUPERVISOR_LOG)}; rerun pytest"
                )
            time.sleep(0.2)
        raise ModelLoadError(
            f"the {name} engine did not answer within {deadline:.0f} s; give more with --holistic-vllm-start-timeout"
        )

    def _state(self) -> dict[str, object] | None:
        try:
            loaded = json.loads((self.folder / STATE_FILE).read_text())
        except (OSError, ValueError):
            return None
        return loaded if isinstance(loaded, dict) else None

    def _supervisor_pid(self) -> int | None:
        try:
            return int((self.folder / PID_FILE).read_text())
        except (OSError, ValueError):
            return None

    def _supervisor_alive(self) -> bool:
        pid = self._supervisor_pid()
        if pid is None:
            return self.folder.is_dir()
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def started(self) -> bool:
        """Whether any process asked for the engine (so it runs, or ran)."""
        return (self.folder / START_FILE).exists()

    def stop(self) -> None:
        """Stop the engine and its supervisor, and remove the folder: the session is over (only the controller calls it)."""
        if not self.owned:
            return
        process = self._supervisor
        if process is not None and process.poll() is None:
            try:
                process.send_signal(signal.SIGTERM)
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            except ProcessLookupError:
                pass
        _remove(self.folder)


def _remove(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _last_line(log: Path) -> str:
    try:
        kept = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        kept = []
    return kept[-1] if kept else "it said nothing"


def join_argv(argv: tuple[str, ...] | list[str]) -> str:
    """An argument list as one shell-quoted line, for reports and messages."""
    import shlex

    return shlex.join(argv)
