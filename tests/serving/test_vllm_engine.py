"""``--model vllm:FOLDER`` with the real vLLM: the engine the plugin starts, shares between workers and stops.

The core suite's BoolQ, MMLU and HellaSwag (four instances each) run on the embedded SmolLM2's transformers folder
through the managed engine, split over two xdist workers: the answers equal the in-process transformers backend's,
and nothing is left behind: no process of the engine's group, no file in the temporary folder, also after Ctrl-C
and after ``kill -9`` of pytest mid-run. vLLM lives in an environment of its own (``tests/serving/vllm_env.sh``);
without ``HOLISTIC_VLLM_PYTHON`` these tests skip with one line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.serving.test_llama_cpp_server import ROOT, _answers, _pytest, _report
from tests.serving.test_managed_engine import _eventually
from tests.serving.test_vllm_server import INSTANCES, LOGPROB_TOLERANCE, _differences
from tests.serving.vllm_server import PYTHON_VARIABLE, _shared_memory, needs_vllm
from tests.signals import start_pytest

pytestmark = needs_vllm
SELECTION = ("suites/core", "-k", "boolq or mmlu or hellaswag", "--holistic-max-instances", INSTANCES)
ENGINE_ARGS = "--enforce-eager --dtype float32 --max-model-len 4096"
"""CPU settings: eager mode (no graph capture on a CPU), the transformers backend's float32, a short context."""


@pytest.fixture
def temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The runs' temporary folder, so that what the engine leaves there can be seen; a small KV cache on a CPU."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
    return folder


def _engine_args(report_dir: Path) -> list[str]:
    from pytest_holistic.models.embedded import converted_dir

    return [
        "--model", f"vllm:{converted_dir()}", f"--holistic-vllm-python={os.environ[PYTHON_VARIABLE]}",
        "--holistic-vllm-args", ENGINE_ARGS, "--holistic-report-dir", str(report_dir),
        "--holistic-cache-dir", str(report_dir / "cache"),
    ]  # fmt: skip


def _group_members(group: int) -> list[int]:
    """The live processes of a process group (the engine's API server and its engine-core processes)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def _engine_state(temporary: Path) -> dict | None:
    for path in temporary.glob("pytest-holistic-engine-*/state.json"):
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None
    return None


def test_the_managed_engine_answers_as_transformers_does_and_leaves_nothing(temporary: Path, tmp_path: Path) -> None:
    before = set(Path("/tmp").glob("holistic-engine-*"))
    served = _pytest(*SELECTION, *_engine_args(tmp_path / "vllm"), "-n", "2")
    assert served.returncode == 0, served.stdout[-3000:]
    report = _report(tmp_path / "vllm")
    details = report["model"]["details"]
    assert report["model"]["backend"] == "vllm" and details["engine"] == "vLLM" and details["engine_version"]
    assert "--enable-prefix-caching" in details["engine_args"] and details["loglikelihood"] == "echo", details
    assert sorted(report["workers"]) == ["gw0", "gw1"]
    # before the in-process run below, whose torch leaves a folder of its own in TMPDIR; pytest's own base folder for
    # its xdist workers (pytest-of-USER) is pytest's, not the engine's
    assert sorted(path.name for path in temporary.iterdir() if not path.name.startswith("pytest-of-")) == []
    assert set(Path("/tmp").glob("holistic-engine-*")) <= before, "the engine's own temporary folder was left behind"
    assert str(temporary) not in subprocess.run(["ps", "-eo", "args"], check=False, capture_output=True, text=True).stdout
    from pytest_holistic.models.embedded import converted_dir

    local = _pytest(*SELECTION, "--model", str(converted_dir()), "--holistic-report-dir", str(tmp_path / "local"))
    assert local.returncode == 0, local.stdout[-3000:]
    remote, here = _answers(report), _answers(_report(tmp_path / "local"))
    assert remote.keys() == here.keys() and len(remote) >= 3 * int(INSTANCES)
    differ, largest = _differences(remote, here)
    assert differ == [] and largest <= LOGPROB_TOLERANCE, (differ, largest)


@pytest.mark.parametrize("send", ["ctrl-c", "kill -9"])
def test_the_engine_stops_when_pytest_is_interrupted_or_killed(temporary: Path, tmp_path: Path, send: str) -> None:
    """Once the engine answers, Ctrl-C (to pytest's process group, as a terminal sends it) or ``kill -9`` of pytest:
    the engine's whole process group ends, and the session's folder and the engine's shared memory are removed."""
    process = start_pytest(ROOT, *SELECTION, *_engine_args(tmp_path / "run"), "-n", "0")
    try:
        assert _eventually(lambda: _engine_state(temporary) is not None or process.poll() is not None, 400)
        state = _engine_state(temporary)
        assert state is not None and state["status"] == "ready", (state, process.poll())
        held = _shared_memory(state["pid"])  # vLLM's message queues and semaphores in /dev/shm
        assert held, "the engine's group holds no shared memory: nothing to check"
        if send == "ctrl-c":
            os.killpg(process.pid, signal.SIGINT)
        else:
            os.kill(process.pid, signal.SIGKILL)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert _eventually(lambda: _group_members(state["pid"]) == [], 60), f"the engine outlived pytest ({send})"
    assert _eventually(lambda: sorted(path.name for path in temporary.iterdir()) == [], 10)
    assert not Path(state["temporary"]).exists(), "the engine's own temporary folder was left behind"
    assert _eventually(lambda: not any(path.exists() for path in held), 10), sorted(p for p in held if p.exists())
    if send == "ctrl-c":
        assert process.returncode == pytest.ExitCode.INTERRUPTED and "Traceback" not in output, output[-3000:]


def test_language_modelling_scores_every_token_as_transformers_does(temporary: Path, tmp_path: Path) -> None:
    """SmolLM2's tokenizer adds no start token, so vLLM alone would leave a document's first token unscored; the
    managed engine's model sends the start token's text before a document (as the transformers backend puts the
    token there), and every document scores the same tokens to the same log-probability."""
    selection = ("suites/core/test_language_modeling.py", "--holistic-max-instances", "2")
    served = _pytest(*selection, *_engine_args(tmp_path / "vllm"), "-n", "0")
    assert served.returncode == 0, served.stdout[-3000:]
    from pytest_holistic.models.embedded import converted_dir

    local = _pytest(*selection, "--model", str(converted_dir()), "--holistic-report-dir", str(tmp_path / "local"))
    assert local.returncode == 0, local.stdout[-3000:]
    remote, here = _answers(_report(tmp_path / "vllm")), _answers(_report(tmp_path / "local"))
    assert remote.keys() == here.keys() and len(remote) >= 2
    for nodeid, record in remote.items():
        ours, theirs = record["completion"], here[nodeid]["completion"]
        assert ours["scored_tokens"] == theirs["scored_tokens"] > 0, nodeid
        assert abs(ours["logprob"] - theirs["logprob"]) <= LOGPROB_TOLERANCE * ours["scored_tokens"], nodeid
