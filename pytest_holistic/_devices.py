"""Which GPUs this machine has, asked without importing torch (settings, the workers and the backends all need it)."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys


def visible_gpus() -> list[str]:
    """GPU indices nvidia-smi reports, without importing torch; none on a machine without it."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        listed = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in listed.stdout.splitlines() if line.strip().isdigit()]


def torch_builds_cuda() -> bool:
    """Whether the installed torch is a build that can use CUDA at all (``+cpu`` wheels cannot), read from metadata."""
    try:
        return not importlib.metadata.version("torch").endswith("+cpu")
    except importlib.metadata.PackageNotFoundError:
        return False


def cuda_device_count() -> int:
    """How many CUDA GPUs torch will see in this process, decided without importing torch when it is not imported yet.

    torch's own answer once it is imported; before, nvidia-smi's list narrowed by ``CUDA_VISIBLE_DEVICES``
    (CUDA stops reading that list at its first invalid entry, so ``""`` and ``-1`` mean none).
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    if not torch_builds_cuda():
        return 0
    gpus = visible_gpus()
    outer = os.environ.get("CUDA_VISIBLE_DEVICES")
    if outer is None or not gpus:
        return len(gpus)
    listed = []
    for entry in (part.strip() for part in outer.split(",")):
        if not entry or entry.startswith("-"):
            break
        listed.append(entry)
    return len(listed)


SHARERS = "PYTEST_HOLISTIC_GPU_SHARERS"
"""Set in each xdist worker: how many workers (this one included) were given the same GPU."""


def sharing_workers() -> int:
    """How many processes of this run share this process's GPU (1 outside xdist), for sizing batches."""
    value = os.environ.get(SHARERS, "1")
    return max(1, int(value)) if value.isdigit() else 1
