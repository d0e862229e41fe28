"""The runner comparison (``test_runner.py``) holds on machines whose kernels differ: rerun under each kernel family.

The golden holds HELM's numbers as its run computed them, once, on the pinned numerics; a user's machine computes
pytest's side with its own kernels. ``envs.KERNEL_FAMILIES`` stands for three kinds of x86-64 CPU (torch's default,
AVX2 and AVX-512 kernels, with MKL, OpenBLAS and NumPy set to match), and each reruns the whole comparison in a
pytest process of its own, which must pass: the same texts, chosen options and counts, and every number within the
tolerances ``test_runner.py`` states. The session's own family is not rerun: ``test_runner.py`` itself compares
under it, on this machine's kernels as they come (so every session covers three families where the CPU has AVX-512).
The two tests there that measure the golden's margins against rounding are left out of the reruns: they measure the
golden, which no family changes. A family this CPU cannot run skips in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.envs import KERNEL_FAMILIES, kernel_family_support

pytestmark = pytest.mark.slow
pytest.importorskip("transformers", reason="the runner golden's model needs torch and transformers (the [test] extra)")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("family", sorted(KERNEL_FAMILIES))
def test_runner_comparison_holds_under_kernel_family(family: str, tmp_path: Path) -> None:
    missing = kernel_family_support(family)
    if missing:
        pytest.skip(missing)
    import torch

    if torch.backends.cpu.get_cpu_capability().lower() == family:  # this process's own kernels, no probe needed
        pytest.skip(f"{family} is this session's own family: test_runner.py compares under it")
    ours = ("PYTEST_XDIST", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST", "PYTEST_VERSION")
    env = {key: value for key, value in os.environ.items() if not key.startswith(ours)} | KERNEL_FAMILIES[family]
    command = [
        sys.executable, "-m", "pytest", str(ROOT / "tests" / "conformance" / "test_runner.py"), "-q", "-p", "no:xdist",
        "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "basetemp"), "--tb=line", "-k", "not decided_by_more_than_rounding",
    ]  # fmt: skip
    done = subprocess.run(command, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    summary = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    assert done.returncode == 0, f"under the {family} kernels: {summary[0]}\n" + done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in summary[0] and " failed" not in summary[0] and " error" not in summary[0], summary[0]
