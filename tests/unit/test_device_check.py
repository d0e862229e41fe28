"""``--holistic-device`` is checked against the GPUs this machine shows, without importing torch.

The machines that run these tests have no GPU, so nvidia-smi's list is replaced; the plugin-level tests in
tests/plugin/test_malformed_inputs.py run the real path (no GPU visible) end to end.
"""

from __future__ import annotations

import sys

import pytest

from pytest_holistic.errors import UserError
from pytest_holistic.settings import check_device


@pytest.fixture
def two_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # decide from nvidia-smi's list, as before any import
    monkeypatch.setattr("pytest_holistic._devices.visible_gpus", lambda: ["0", "1"])
    monkeypatch.setattr("pytest_holistic._devices.torch_builds_cuda", lambda: True)  # this machine's torch is a +cpu build
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


@pytest.mark.usefixtures("two_gpus")
def test_a_listed_gpu_is_accepted_and_an_index_beyond_them_is_refused() -> None:
    check_device("cuda")
    check_device("cuda:1")
    with pytest.raises(UserError, match=r"'cuda:2': only 2 CUDA GPU\(s\) are visible \(cuda:0 to cuda:1\)"):
        check_device("cuda:2")


@pytest.mark.usefixtures("two_gpus")
@pytest.mark.parametrize(("visible", "count"), [("1", 1), ("0,1", 2), ("0,-1,1", 1)])
def test_cuda_visible_devices_narrows_the_list(monkeypatch: pytest.MonkeyPatch, visible: str, count: int) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    check_device(f"cuda:{count - 1}")
    with pytest.raises(UserError, match=rf"only {count} CUDA GPU"):
        check_device(f"cuda:{count}")


@pytest.mark.usefixtures("two_gpus")
@pytest.mark.parametrize("visible", ["", "-1"])
def test_an_empty_visible_list_means_no_gpu(monkeypatch: pytest.MonkeyPatch, visible: str) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    with pytest.raises(UserError, match="no visible CUDA GPU; use cpu or auto"):
        check_device("cuda")


def test_cpu_and_auto_need_nothing() -> None:
    check_device("cpu")
    check_device("auto")
