"""The managed engine's temporary folder: the session's own, unless its path is too long for the Unix sockets an
engine makes there (vLLM's ZeroMQ paths: 107 bytes at most, 37 of them vLLM's own name); then one of its own in /tmp,
which the supervisor removes with the session."""

from __future__ import annotations

import json
import signal
import tempfile
from pathlib import Path

from pytest_holistic.models.engine_supervisor import MAX_TEMPORARY_PATH, Supervisor


def _supervisor(folder: Path) -> Supervisor:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "command.json").write_text(json.dumps({"name": "vLLM", "argv": [], "environment": {}}))
    return Supervisor(folder, owner=0)


def _shut_down(supervisor: Supervisor) -> None:
    """The supervisor's own clean-up, with this process's signal handlers kept (it ignores signals while it runs)."""
    kept = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        supervisor.shut_down()
    finally:
        signal.signal(signal.SIGTERM, kept[0])
        signal.signal(signal.SIGINT, kept[1])


def test_a_short_session_folder_keeps_the_engines_temporary_files() -> None:
    folder = Path(tempfile.mkdtemp(prefix="he-", dir="/tmp"))
    supervisor = _supervisor(folder)
    try:
        assert len(str(folder / "tmp")) <= MAX_TEMPORARY_PATH
        assert supervisor.temporary_folder() == folder / "tmp" and (folder / "tmp").is_dir()
        assert supervisor.short_temporary is None
    finally:
        _shut_down(supervisor)
    assert not folder.exists()


def test_a_long_session_folder_gives_the_engine_a_short_one_removed_with_the_session(tmp_path: Path) -> None:
    folder = tmp_path / ("x" * MAX_TEMPORARY_PATH)
    supervisor = _supervisor(folder)
    temporary = supervisor.temporary_folder()
    assert temporary.parent == Path("/tmp") and temporary.name.startswith("holistic-engine-")
    assert len(f"{temporary}/vllm_ipc_0123456789abcdef0123456789ab") <= 107  # vLLM's longest socket name fits
    assert not (folder / "tmp").exists()
    (temporary / "socket").write_text("")
    _shut_down(supervisor)
    assert not temporary.exists() and not folder.exists()
