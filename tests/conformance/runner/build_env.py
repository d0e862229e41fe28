"""Build (or reuse) the environment HELM's runner runs in: ``~/.cache/pytest-holistic/helm-runner``.

torch goes in first, alone and without dependencies (``torch==2.13.0``, the CPU wheel pip finds on local disk), then
every line of ``requirements.txt`` with ``--no-deps``: pip never resolves a dependency by itself, so it cannot pull a
CUDA torch or torchvision, and what is installed is exactly what the file says. A stamp of both keeps a built
environment until either changes. Nothing here touches the project's own environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
TORCH = "torch==2.13.0"


def default_venv() -> Path:
    cache = os.environ.get("PYTEST_HOLISTIC_CACHE_DIR") or Path.home() / ".cache" / "pytest-holistic"
    return Path(cache) / "helm-runner"


def ensure(venv: Path) -> Path:
    """The environment's interpreter, (re)installed when the pins changed since the last install."""
    python = venv / "bin" / "python"
    stamp = venv / "requirements.installed"
    wanted = f"{TORCH}\n" + REQUIREMENTS.read_text(encoding="utf-8")
    if python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    subprocess.run([*pip, TORCH], check=True)
    subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=True)
    stamp.write_text(wanted, encoding="utf-8")
    return python


if __name__ == "__main__":
    print(ensure(Path(sys.argv[1]) if len(sys.argv) > 1 else default_venv()))
