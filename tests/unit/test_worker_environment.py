"""Each xdist worker gets its own GPU (round-robin over the outer list) and its share of CPU threads."""

from __future__ import annotations

import os

import pytest

from pytest_holistic._devices import SHARERS
from pytest_holistic.worker import worker_environment


def _device(updates: dict[str, str]) -> tuple[str, str]:
    return updates["CUDA_VISIBLE_DEVICES"], updates[SHARERS]


def test_worker_takes_the_ith_device_of_the_outer_list() -> None:
    env = {"CUDA_VISIBLE_DEVICES": "3,5,7", "OMP_NUM_THREADS": "4"}
    assert worker_environment("gw0", 3, env) == {"CUDA_VISIBLE_DEVICES": "3", SHARERS: "1"}
    assert _device(worker_environment("gw1", 3, env)) == ("5", "1")
    assert _device(worker_environment("gw2", 3, env)) == ("7", "1")
    # more workers than GPUs: round-robin, and each worker knows how many share its GPU (to size its batches)
    assert [_device(worker_environment(f"gw{i}", 5, env)) for i in range(5)] == [
        ("3", "2"),
        ("5", "2"),
        ("7", "1"),
        ("3", "2"),
        ("5", "2"),
    ]
    assert {_device(worker_environment(f"gw{i}", 4, {"CUDA_VISIBLE_DEVICES": "0"})) for i in range(4)} == {("0", "4")}


def test_gpus_listed_by_nvidia_smi_when_no_outer_list() -> None:
    assert _device(worker_environment("gw1", 2, {"OMP_NUM_THREADS": "1"}, gpus=["0", "1"])) == ("1", "1")


@pytest.mark.parametrize(
    ("cores", "workers", "threads"),
    [(8, 2, "4"), (8, 3, "2"), (2, 2, "1"), (1, 4, "1"), (16, 1, "16"), (None, 2, "1")],
)
def test_no_gpu_means_no_device_variable_and_a_share_of_the_cores(
    monkeypatch: pytest.MonkeyPatch, cores: int | None, workers: int, threads: str
) -> None:
    """Each worker's threads: the cores split evenly (rounded down), at least one, one when the count is unknown."""
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    updates = worker_environment("gw0", workers, {}, gpus=[])
    assert "CUDA_VISIBLE_DEVICES" not in updates
    assert updates["OMP_NUM_THREADS"] == threads


def test_the_users_thread_count_is_kept() -> None:
    assert "OMP_NUM_THREADS" not in worker_environment("gw0", 2, {"OMP_NUM_THREADS": "3"}, gpus=[])


def test_empty_outer_list_hides_all_gpus() -> None:
    # CUDA_VISIBLE_DEVICES="" is the user's way to say "no GPU": respected, not replaced.
    assert "CUDA_VISIBLE_DEVICES" not in worker_environment(
        "gw0", 2, {"CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}, gpus=["0"]
    )
