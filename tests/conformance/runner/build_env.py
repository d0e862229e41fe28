"""Build (or reuse) the environment HELM's runner runs in: ``~/.cache/pytest-holistic/helm-runner``.

torch goes in first, alone and without dependencies (``torch==2.13.0``, the CPU wheel pip finds on local disk), then
every line of ``requirements.txt`` with ``--no-deps``: pip never resolves a dependency by itself, so it cannot pull a
CUDA torch or torchvision, and what is installed is exactly what the file says. A stamp of both keeps a built
environment until either changes. Nothing here touches the project's own environment.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
TORCH = "torch==2.13.0"


def default_venv() -> Path:
    from tests.conformance.envs import cache_root

    return cache_root() / "helm-runner"


def ensure(venv: Path) -> Path:
    """The environment's interpreter, (re)installed when the pins changed since the last install."""
    from tests.conformance.envs import ensure_env

    return ensure_env(venv, REQUIREMENTS, first=(TORCH,))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[2]))  # run as a script: the project's tests package
    print(ensure(Path(sys.argv[1]) if len(sys.argv) > 1 else default_venv()))
