"""Which GPUs this machine has, asked without importing torch (settings, the workers and the backends all need it)."""

from __future__ import annotations

import shutil
import subprocess


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
