"""The reference environments: virtual environments under the pytest-holistic cache, each holding exactly its pins.

Every line is installed with ``--no-deps``, so pip resolves nothing by itself (it can pull neither a CUDA torch nor a
newer version than the file says), and the project's own environment is never touched. A stamp of what was installed
keeps a built environment until its pins change.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPRODUCIBLE_NUMERICS = {
    "OPENBLAS_CORETYPE": "Haswell",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "AVX2",
}
"""The same floating-point code paths on any x86-64 machine with AVX2, for the goldens' generators and the references
they run. OpenBLAS, MKL, NumPy and torch each pick kernels by the CPU they find (AVX-512 or not, Intel or AMD) and split
sums by thread count, and those round differently in the last bits: regenerated on another machine, HELM's calibration
numbers (Platt scaling, binned ECE) changed in their last digits until these were pinned, and the runner golden's tiny
model trained to other weights with torch's AVX-512 kernels than with its AVX2 ones."""


def pin_numerics() -> None:
    """Set ``REPRODUCIBLE_NUMERICS`` for this process (before it imports numpy or torch) and every process it starts."""
    os.environ.update(REPRODUCIBLE_NUMERICS)


def cache_root() -> Path:
    """Where the environments live: ``PYTEST_HOLISTIC_CACHE_DIR``, else ``~/.cache/pytest-holistic``."""
    return Path(os.environ.get("PYTEST_HOLISTIC_CACHE_DIR") or Path.home() / ".cache" / "pytest-holistic")


def ensure_env(venv: Path, requirements: Path, *, first: Sequence[str] = ()) -> Path:
    """The environment's interpreter, (re)installed when the pins changed since the last install.

    ``first``: requirements installed alone before the file (torch, so nothing in the file can bring another build).
    """
    python = venv / "bin" / "python"
    stamp = venv / "requirements.installed"
    wanted = "".join(f"{line}\n" for line in first) + requirements.read_text(encoding="utf-8")
    if python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    if first:
        subprocess.run([*pip, *first], check=True)
    subprocess.run([*pip, "-r", str(requirements)], check=True)
    stamp.write_text(wanted, encoding="utf-8")
    return python
