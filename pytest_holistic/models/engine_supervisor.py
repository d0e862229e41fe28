"""The supervisor of a session's engine: starts it when asked, stops it when pytest ends or is gone.

Run by :mod:`.engine` as ``python engine_supervisor.py FOLDER OWNER_PID``, by its path, so it imports only the
standard library. It watches the folder (see :mod:`.engine` for its files) and the pytest process that started it:

- once ``start`` appears, it runs the engine's quick check, then the engine, in a process group of its own, with its
  temporary files in ``FOLDER/tmp`` (or a shorter folder of its own in ``/tmp``, see ``temporary_folder``) and its output in ``FOLDER/engine.log``; it writes ``state.json`` when the engine
  answers, or when it exits or misses its deadline first (then with the last lines of its log, in one line);
- on SIGTERM (pytest's end, Ctrl-C included), or when pytest's main process is gone (``kill -9``, a crash: this
  process is then handed to another parent), it stops the engine's whole group (SIGTERM, SIGKILL after a grace) and
  removes the folder, then exits.

The engine is also asked to die with the supervisor (Linux's parent-death signal), should the supervisor itself be
killed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

POLL_SECONDS = 0.2
GRACE_SECONDS = 20.0
"""Between SIGTERM and SIGKILL of the engine's group."""
MAX_TEMPORARY_PATH = 60
"""Bytes of a temporary folder's path beyond which the engine gets a shorter one (see ``temporary_folder``)."""
LOG_LINES = 5
"""Lines of the engine's log that a failure quotes."""


def main(folder: Path, owner: int) -> int:
    supervisor = Supervisor(folder, owner)
    signal.signal(signal.SIGTERM, supervisor.asked_to_stop)
    signal.signal(signal.SIGINT, supervisor.asked_to_stop)
    try:
        supervisor.run()
    finally:
        supervisor.shut_down()
    return 0


class Supervisor:
    """One engine's life: started on request, watched, stopped with the session."""

    def __init__(self, folder: Path, owner: int) -> None:
        self.folder = folder
        self.owner = owner
        self.command: dict[str, Any] = json.loads((folder / "command.json").read_text())
        self.name = str(self.command["name"])
        self.engine: subprocess.Popen[bytes] | None = None
        self.started = 0.0
        self.port = 0
        self.ready = False
        self.failed = False
        self.stopping = False
        self.temporary: Path | None = None
        self.shared: set[Path] = set()  # /dev/shm files the engine's group held, removed once it is gone
        self.shared_before: set[Path] = set()  # multiprocessing's /dev/shm files before the engine started
        self.short_temporary: Path | None = None  # the engine's temporary folder when not in the session's folder

    def asked_to_stop(self, _signum: int, _frame: object) -> None:
        self.stopping = True

    def owner_gone(self) -> bool:
        """pytest's main process has ended: this process was handed to another parent, or the pid is gone."""
        if os.getppid() != self.owner:
            return True
        try:
            os.kill(self.owner, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        return False

    def run(self) -> None:
        while not self.stopping and not self.owner_gone():
            if self.engine is None and not self.failed and (self.folder / "start").exists():
                self.start()
            elif self.engine is not None and not self.failed:
                self.watch()
            time.sleep(POLL_SECONDS)

    # -- starting ----------------------------------------------------------------------------------

    def start(self) -> None:
        problem = self.check()
        if problem is not None:
            self.fail(problem, with_fix=False)  # the line says what to do already
            return
        argv = [str(part).replace("{port}", str(self.port)) for part in self.command["argv"]]
        temporary = self.temporary = self.temporary_folder()
        self.shared_before = _shared_files()
        environment = {**os.environ, **self.command["environment"], "TMPDIR": str(temporary)}
        self.started = time.monotonic()
        with (self.folder / "engine.log").open("wb") as log:
            try:
                self.engine = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=environment,
                    cwd=temporary,
                    start_new_session=True,  # its own group: stopped whole, its engine-core processes with it
                    preexec_fn=_die_with_parent,  # noqa: PLW1509 - the supervisor runs no threads
                )
            except OSError as error:
                self.fail(f"cannot run {argv[0]} ({error.strerror})", with_fix=False)

    def temporary_folder(self) -> Path:
        """The engine's temporary folder: in the session's folder, or one of its own in ``/tmp`` when that path is too
        long for the Unix sockets engines make there (vLLM's: at most 107 bytes, 37 of them its own name)."""
        inside = self.folder / "tmp"
        if len(str(inside)) <= MAX_TEMPORARY_PATH or not os.access("/tmp", os.W_OK):
            inside.mkdir(exist_ok=True)
            return inside
        self.short_temporary = Path(tempfile.mkdtemp(prefix="holistic-engine-", dir="/tmp"))
        return self.short_temporary

    def check(self) -> str | None:
        """Why the engine cannot start (not installed, a busy port), found in seconds rather than at the deadline."""
        probe = [str(part) for part in self.command.get("probe_argv") or ()]
        if probe:
            try:
                done = subprocess.run(probe, check=False, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired) as error:
                return f"cannot run {probe[0]} ({getattr(error, 'strerror', None) or type(error).__name__})"
            if done.returncode != 0:
                said = [line.strip() for line in done.stdout.decode(errors="replace").splitlines() if line.strip()]
                return said[-1] if said else f"{probe[0]} exited with status {done.returncode}"
        wanted = self.command.get("port")
        if wanted:
            if not _port_free(int(wanted)):
                return f"port {wanted} on 127.0.0.1 is busy (another process listens there); give another --port or none"
            self.port = int(wanted)
        else:
            self.port = _free_port()
        return None

    def watch(self) -> None:
        """Until ready: ready, exited or late; once ready: still running."""
        assert self.engine is not None
        code = self.engine.poll()
        if code is not None:
            when = "after it had started" if self.ready else "while starting"
            self.fail(f"exited with status {code} {when}; the last lines of its log: {self.log_tail()}")
            return
        if self.ready:
            return
        if _answers(self.address(self.command["ready_path"])):
            self.ready = True
            self.shared |= _shared_memory(self.engine.pid)  # in case it dies by itself later
            version = _version(self.address(self.command["version_path"])) if self.command.get("version_path") else None
            self.write_state(
                {
                    "status": "ready",
                    "url": self.address(self.command["api_path"]),
                    "version": version,
                    "seconds": round(time.monotonic() - self.started, 3),
                    "pid": self.engine.pid,
                    "temporary": str(self.temporary),
                }
            )
        elif time.monotonic() - self.started > float(self.command["start_timeout"]):
            self.stop_engine()
            self.fail(
                f"did not answer within {float(self.command['start_timeout']):.0f} s (--holistic-vllm-start-timeout); "
                f"the last lines of its log: {self.log_tail()}"
            )

    def address(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def log_tail(self) -> str:
        try:
            text = (self.folder / "engine.log").read_text(errors="replace")
        except OSError:
            return "no log"
        kept = [line.strip() for line in text.splitlines() if line.strip()]
        return " | ".join(kept[-LOG_LINES:]) or "an empty log"

    def fail(self, problem: str, with_fix: bool = True) -> None:
        self.failed = True
        fix = (self.command.get("fix") or "") if with_fix else ""
        self.write_state({"status": "failed", "line": f"the {self.name} engine {problem}" + (f"; {fix}" if fix else "")})

    def write_state(self, state: dict[str, Any]) -> None:
        """Written whole or not at all: a reader sees no state or the complete one."""
        partial = self.folder / "state.json.part"
        partial.write_text(json.dumps(state))
        os.replace(partial, self.folder / "state.json")

    # -- stopping ----------------------------------------------------------------------------------

    def stop_engine(self) -> None:
        """SIGTERM to the engine's whole group, SIGKILL to what is left after the grace; then the shared memory the
        group held, and multiprocessing files made since it started that no process holds: a killed engine cannot remove
        them itself (vLLM's message queues: hundreds of MiB a start)."""
        engine = self.engine
        if engine is None:
            return
        self.shared |= _shared_memory(engine.pid)
        if engine.poll() is None:
            _signal_group(engine.pid, signal.SIGTERM)
            try:
                engine.wait(GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(engine.pid, signal.SIGKILL)  # the engine-core processes it may leave behind
        engine.wait()
        deadline = time.monotonic() + GRACE_SECONDS
        while _group_alive(engine.pid) and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        leftovers = self.shared | (_shared_files() - self.shared_before)  # (a semaphore a killed process never unlinked)
        for path in leftovers - _shared_memory(None):  # what no live process holds any more
            path.unlink(missing_ok=True)

    def shut_down(self) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the clean-up short
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.stop_engine()
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.short_temporary is not None:
            shutil.rmtree(self.short_temporary, ignore_errors=True)


def _group_of(process: Path) -> int:
    return int((process / "stat").read_text().rpartition(")")[2].split()[2])


def _group_alive(group: int) -> bool:
    for process in Path("/proc").glob("[0-9]*"):
        try:
            if _group_of(process) == group:
                return True
        except (OSError, ValueError, IndexError):
            continue
    return False


SHARED_PREFIXES = ("psm_", "sem.mp-")
"""The /dev/shm files of Python's multiprocessing (shared memory blocks, named semaphores), which vLLM's processes make."""


def _shared_files() -> set[Path]:
    """Python multiprocessing's files in /dev/shm now."""
    try:
        return {path for path in Path("/dev/shm").iterdir() if path.name.startswith(SHARED_PREFIXES)}
    except OSError:
        return set()


def _shared_memory(group: int | None) -> set[Path]:
    """The files under /dev/shm that the processes of ``group`` (None: any process) map or hold open."""
    found: set[Path] = set()
    for process in Path("/proc").glob("[0-9]*"):
        try:
            if group is not None and _group_of(process) != group:
                continue
            maps = (process / "maps").read_text().splitlines()
            mapped = [line.split(maxsplit=5)[5] for line in maps if " /dev/shm/" in line]
            opened = [os.readlink(fd) for fd in (process / "fd").iterdir()]
        except (OSError, ValueError, IndexError):  # gone meanwhile, or not ours to read
            continue
        found.update(Path(name.removesuffix(" (deleted)")) for name in [*mapped, *opened] if name.startswith("/dev/shm/"))
    return found


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _die_with_parent() -> None:
    """In the engine's process, before it runs: SIGTERM it if the supervisor dies (Linux; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(200 <= answer.status < 300)
    except (OSError, ValueError):
        return False


def _version(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            found = json.loads(answer.read(10_000)).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return str(found) if found is not None else None


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), int(sys.argv[2])))
