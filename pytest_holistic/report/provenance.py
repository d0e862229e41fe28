"""What a report says about where it was made: the machine, its GPUs, and the command line without its secrets.

Everything here is read cheaply on the controller when the report is built: files under ``/proc`` and what
is already imported. torch is asked only when the run already imported it and initialised CUDA (``-n 0`` on a
GPU); asking otherwise would import it (seconds) or create a CUDA context (memory on the GPU) for one line.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path
from typing import Any


def cpu_model() -> str | None:
    """The CPU's marketing name: ``/proc/cpuinfo`` on Linux, else what ``platform`` knows (often only the architecture)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model", "Processor") and value.strip():
            return value.strip()
    return platform.processor() or None


NVIDIA_PROC = Path("/proc/driver/nvidia")


def _nvidia_driver(root: Path = NVIDIA_PROC) -> str | None:
    """The NVIDIA kernel driver's version from ``/proc/driver/nvidia/version`` (Linux), without nvidia-smi."""
    try:
        text = (root / "version").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = re.search(r"Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)", text)
    return found.group(1) if found else None


def _proc_gpus(root: Path = NVIDIA_PROC) -> list[str]:
    """The machine's NVIDIA GPUs by name from ``/proc/driver/nvidia/gpus/*/information`` (all of them, visible or not)."""
    names = []
    for information in sorted((root / "gpus").glob("*/information")):
        try:
            text = information.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found = re.search(r"^Model:\s*(.+)$", text, re.MULTILINE)
        names.append(found.group(1).strip() if found else "unknown")
    return names


def _torch_gpus(torch: Any) -> list[str] | None:
    """The names of the GPUs this process's torch already runs CUDA on; None when it has not initialised CUDA."""
    try:
        cuda = torch.cuda
        if not (cuda.is_initialized() and cuda.is_available()):
            return None
        return [str(cuda.get_device_name(index)) for index in range(cuda.device_count())]
    except (RuntimeError, AssertionError, AttributeError):  # a broken CUDA set-up must not cost the report
        return None


def gpus() -> dict[str, Any] | None:
    """GPU names, count and driver: from torch when this process already runs CUDA, else the Linux driver's files.

    None on a machine without an NVIDIA driver. ``source`` says which: torch counts the GPUs this process could
    use (``CUDA_VISIBLE_DEVICES`` applied), the driver's files every GPU of the machine.
    """
    torch = sys.modules.get("torch")
    driver = _nvidia_driver()
    found = _torch_gpus(torch) if torch is not None else None
    if torch is not None and found is not None:
        return {
            "count": len(found),
            "names": found,
            "driver": driver,
            "cuda": getattr(torch.version, "cuda", None),
            "source": "torch",
        }
    names = _proc_gpus()
    if not names and driver is None:
        return None
    return {"count": len(names), "names": names, "driver": driver, "cuda": None, "source": "/proc/driver/nvidia"}


def environment() -> dict[str, Any]:
    """The machine the controller ran on: OS, Python, CPU, GPUs."""
    return {
        "os": platform.system(),
        "os_release": platform.release(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "gpus": gpus(),
    }
