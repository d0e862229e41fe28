"""``--holistic-dtype auto``: the checkpoint's own dtype on CUDA, float32 on CPU; predicted without loading as loaded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_holistic.models.hf_options import HFOptions
from pytest_holistic.models.hf import HFBackend, checkpoint_dtype, expected_variant, resolve_dtype


@pytest.fixture(scope="module")
def saved_in(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny GPT-2 saved again in float16 and in float32 (config.json says which)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folders = {}
    for name in ("float16", "float32"):
        folder = tmp_path_factory.mktemp("dtypes") / f"tiny-{name}"
        AutoModelForCausalLM.from_pretrained(tiny_gpt2, dtype=getattr(torch, name)).save_pretrained(folder)
        AutoTokenizer.from_pretrained(tiny_gpt2).save_pretrained(folder)
        folders[name] = folder
    return folders


@pytest.mark.parametrize("saved", ["float16", "float32"])
@pytest.mark.parametrize("asked", ["auto", "float32", "bfloat16"])
def test_the_predicted_variant_is_the_loaded_one_on_cpu(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, saved_in: dict[str, Path], saved: str, asked: str
) -> None:
    monkeypatch.setenv("PYTEST_HOLISTIC_CACHE_DIR", str(tmp_path))
    assert checkpoint_dtype(str(saved_in[saved])) == saved
    backend = HFBackend(str(saved_in[saved]), HFOptions(device="cpu", dtype=asked))
    identity = backend.identify()
    assert identity is not None
    model = backend.load()
    assert model.info.variant == identity.variant == {"device": "cpu", "dtype": "float32" if asked == "auto" else asked}
    assert model.info.details["dtype"] == identity.variant["dtype"]


def test_auto_keeps_the_checkpoint_dtype_on_cuda_and_float32_elsewhere() -> None:
    assert resolve_dtype("cuda", "auto", "bfloat16") == "bfloat16"
    assert resolve_dtype("cuda", "auto", "float16") == "float16"
    assert resolve_dtype("cuda", "auto", "float32") == "float32"  # a float32 checkpoint is not narrowed
    assert resolve_dtype("cuda", "auto", None) == "float32"  # a config declaring none: transformers' default
    assert resolve_dtype("cpu", "auto", "bfloat16") == resolve_dtype("mps", "auto", "float16") == "float32"
    assert resolve_dtype("cuda", "half", "bfloat16") == "float16"
    assert expected_variant("cuda:3", "auto", "bfloat16") == {"device": "cuda", "dtype": "bfloat16"}


@pytest.mark.parametrize(
    ("config", "declared"),
    [
        ({"dtype": "bfloat16", "torch_dtype": "float32"}, "bfloat16"),  # dtype wins, as in transformers
        ({"torch_dtype": "float16"}, "float16"),
        ({}, None),
        ({"dtype": "int8"}, None),
    ],
)
def test_the_declared_dtype_is_read_from_config_json(tmp_path: Path, config: dict, declared: str | None) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert checkpoint_dtype(str(tmp_path)) == declared


def test_a_broken_or_missing_config_declares_nothing(tmp_path: Path) -> None:
    assert checkpoint_dtype(str(tmp_path)) is None
    (tmp_path / "config.json").write_text("{not json")
    assert checkpoint_dtype(str(tmp_path)) is None
    assert checkpoint_dtype("holistic-test/not-in-any-cache") is None


def test_a_hub_name_reads_config_json_from_the_local_hf_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, saved_in: dict[str, Path]
) -> None:
    import huggingface_hub.constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--holistic-test--tiny-fp16"
    (repo / "snapshots" / commit).mkdir(parents=True)
    shutil.copy(saved_in["float16"] / "config.json", repo / "snapshots" / commit / "config.json")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert checkpoint_dtype("holistic-test/tiny-fp16") == "float16"
    assert checkpoint_dtype("holistic-test/tiny-fp16", commit) == "float16"
    assert expected_variant("cuda", "auto", checkpoint_dtype("holistic-test/tiny-fp16")) == {"device": "cuda", "dtype": "float16"}
