"""The reference environments: virtual environments under the pytest-holistic cache, each holding exactly its pins.

Every line is installed with ``--no-deps``, so pip resolves nothing by itself (it can pull neither a CUDA torch nor a
newer version than the file says), and the project's own environment is never touched. A stamp of what was installed
keeps a built environment until its pins change.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
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
"""The same floating-point code paths on x86-64 machines with AVX2, for the goldens' generators and the references they
run (never for the tests, which compute on the machine's own numerics and compare at tolerances that hold across
them). OpenBLAS, MKL, NumPy and torch each pick kernels by the CPU they find (AVX-512 or not, Intel or AMD) and split
sums by thread count, and those round differently in the last bits: regenerated on another machine, HELM's calibration
numbers (Platt scaling, binned ECE) changed in their last digits until these were pinned. The pins do not make every
machine alike: the runner golden's tiny model, once trained by the tests under them, came out with other weights on
an Intel CPU with AVX-512 than on the AMD one that made the golden, which is why that model is now committed."""

KERNEL_FAMILIES = {
    "default": {
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
        "OPENBLAS_CORETYPE": "Nehalem",
        "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
    },
    "avx2": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "OPENBLAS_CORETYPE": "Haswell",
        "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    },
    "avx512": {
        "ATEN_CPU_CAPABILITY": "avx512",
        "MKL_ENABLE_INSTRUCTIONS": "AVX512",
        "OPENBLAS_CORETYPE": "SkylakeX",
        "NPY_DISABLE_CPU_FEATURES": "",
    },
}
"""torch's three x86-64 kernel families (``ATEN_CPU_CAPABILITY``), each with the kernels a CPU of that kind gives MKL,
OpenBLAS and NumPy too: on one machine that has AVX-512, they stand for a CPU without vector extensions beyond SSE4.2,
one with AVX2, and one with AVX-512 (``test_runner_kernels.py`` reruns the runner comparison under each). Each can run
only where the CPU has its instructions; ``kernel_family_support`` says whether it does."""


def torch_capability(env: Mapping[str, str]) -> str:
    """The kernel family torch picks in a process with ``env`` (lower case; empty when torch does not start)."""
    probe = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    done = subprocess.run([sys.executable, "-c", probe], check=False, env=dict(env), capture_output=True, text=True, timeout=120)
    return done.stdout.strip().lower() if done.returncode == 0 else ""


def kernel_family_support(family: str) -> str | None:
    """None when this machine can run ``family`` (``KERNEL_FAMILIES``), else why not, in a few words."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"torch's kernel families are x86-64's; this machine is {platform.machine()}"
    capability = torch_capability({**os.environ, **KERNEL_FAMILIES[family]})
    if capability != family:
        return f"this CPU has no {family} kernels (torch chose {capability or 'nothing'})"
    return None


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
