"""A local folder's identity is hashed once and kept: kept while files are unchanged, rehashed when any changes."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from pytest_holistic.models import fingerprint
from pytest_holistic.models.hf import weights_hash

HOUR_NS = 3600 * 10**9


def _age(folder: Path, seconds_ago: int = 3600) -> None:
    """Date every file back, as files saved well before the run are (a fresh mtime is racy and never kept)."""
    stamp = time.time_ns() - seconds_ago * 10**9
    for path in folder.iterdir():
        os.utime(path, ns=(stamp, stamp))


def _model_folder(root: Path, weights: bytes = b"\x01" * 4096, name: str = "model") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "gpt2", "dtype": "float32"}')
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "tokenizer.json").write_text("{}")  # not part of the identity
    _age(folder)
    return folder


def _reference_digest(folder: Path) -> str:
    """The identity as every earlier version computed it, so response caches written before stay valid."""
    digest = hashlib.sha256()
    for path in sorted(
        p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin", ".pt", ".gguf") or p.name == "config.json"
    ):
        digest.update(path.name.encode() + path.read_bytes())
    return "sha256:" + digest.hexdigest()[:16]


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """Point the store at a temporary cache folder and count full hashes (each one reads every weight byte)."""
    monkeypatch.setenv("PYTEST_HOLISTIC_CACHE_DIR", str(tmp_path / "cache"))
    counted: list[str] = []
    original = fingerprint.content_digest

    def counting(files: list[Path]) -> str:
        counted.append(original(files))
        return counted[-1]

    monkeypatch.setattr(fingerprint, "content_digest", counting)
    return counted


def test_the_digest_is_kept_and_equals_the_full_hash(hashes: list[str], tmp_path: Path) -> None:
    folder = _model_folder(tmp_path)
    assert weights_hash(folder) == weights_hash(folder) == _reference_digest(folder)
    assert len(hashes) == 1
    store = json.loads((tmp_path / "cache" / "fingerprints.json").read_text())
    assert store["folders"][str(folder.resolve())]["digest"] == _reference_digest(folder)


def test_changed_content_or_size_is_rehashed_and_changes_the_digest(hashes: list[str], tmp_path: Path) -> None:
    folder = _model_folder(tmp_path)
    first = weights_hash(folder)
    (folder / "model.safetensors").write_bytes(b"\x02" * 4096)  # same size, new values
    _age(folder, 1800)
    second = weights_hash(folder)
    (folder / "model.safetensors").write_bytes(b"\x02" * 4097)
    _age(folder, 1800)
    third = weights_hash(folder)
    assert len({first, second, third}) == 3
    assert third == _reference_digest(folder)
    assert len(hashes) == 3
    assert weights_hash(folder) == third and len(hashes) == 3


def test_a_touched_file_or_a_new_shard_is_rehashed(hashes: list[str], tmp_path: Path) -> None:
    folder = _model_folder(tmp_path)
    first = weights_hash(folder)
    _age(folder, 1800)  # mtime alone changes: hashed again, same bytes, same identity
    assert weights_hash(folder) == first and len(hashes) == 2
    (folder / "model-00002.safetensors").write_bytes(b"\x03")
    _age(folder)
    assert weights_hash(folder) != first and len(hashes) == 3


def test_a_file_modified_just_before_hashing_is_not_trusted_later(hashes: list[str], tmp_path: Path) -> None:
    folder = _model_folder(tmp_path)
    os.utime(folder / "model.safetensors")  # modified now: a same-size rewrite within the timestamp tick would not show
    weights_hash(folder)
    weights_hash(folder)
    assert len(hashes) == 2


@pytest.mark.parametrize(
    "content", [b"\x00garbage{", b'{"version": 1, "folders": []}', b'{"version": 99, "folders": {}}', b"[1, 2]"]
)
def test_a_corrupt_store_is_ignored_and_rewritten(hashes: list[str], tmp_path: Path, content: bytes) -> None:
    folder = _model_folder(tmp_path)
    store = tmp_path / "cache" / "fingerprints.json"
    store.parent.mkdir()
    store.write_bytes(content)
    assert weights_hash(folder) == _reference_digest(folder)
    assert json.loads(store.read_text())["version"] == fingerprint.STORE_VERSION
    assert weights_hash(folder) == _reference_digest(folder) and len(hashes) == 1


def test_an_entry_with_wrong_types_is_not_trusted(hashes: list[str], tmp_path: Path) -> None:
    folder = _model_folder(tmp_path)
    weights_hash(folder)
    store = tmp_path / "cache" / "fingerprints.json"
    data = json.loads(store.read_text())
    data["folders"][str(folder.resolve())]["digest"] = 12
    store.write_text(json.dumps(data))
    assert weights_hash(folder) == _reference_digest(folder) and len(hashes) == 2


def test_an_unwritable_cache_folder_still_gives_the_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = _model_folder(tmp_path)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("PYTEST_HOLISTIC_CACHE_DIR", str(blocker / "cache"))
    assert weights_hash(folder) == _reference_digest(folder)


def test_folders_that_are_gone_are_dropped_from_the_store(hashes: list[str], tmp_path: Path) -> None:
    gone = _model_folder(tmp_path, name="gone")
    kept = _model_folder(tmp_path, name="kept")
    weights_hash(gone)
    for path in gone.iterdir():
        path.unlink()
    gone.rmdir()
    weights_hash(kept)
    store = json.loads((tmp_path / "cache" / "fingerprints.json").read_text())
    assert list(store["folders"]) == [str(kept.resolve())]


def test_same_header_different_values_is_a_different_identity(hashes: list[str], tmp_path: Path) -> None:
    """Why the safetensors header alone is not an identity: it holds dtypes, shapes and offsets, not values."""
    import torch
    from safetensors.torch import save_file

    folders = []
    for name, value in (("a", 0.0), ("b", 1.0)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "config.json").write_text("{}")
        save_file({"w": torch.full((4, 4), value)}, str(folder / "model.safetensors"))
        folders.append(folder)
    headers = [(f / "model.safetensors").read_bytes()[:64] for f in folders]
    assert headers[0] == headers[1]
    assert weights_hash(folders[0]) != weights_hash(folders[1])


def _identify_in_a_process(folder: str, cache: str, marks: str) -> None:
    """One xdist worker: identify a folder, leaving a mark file for each full hash it computed."""
    os.environ["PYTEST_HOLISTIC_CACHE_DIR"] = cache
    original = fingerprint.content_digest

    def marking(files: list[Path]) -> str:
        Path(marks, f"{os.getpid()}-{time.time_ns()}").touch()
        time.sleep(0.3)  # long enough that the other workers arrive while this one hashes
        return original(files)

    fingerprint.content_digest = marking
    Path(marks, f"result-{os.getpid()}").write_text(fingerprint.folder_digest(Path(folder)))


def test_concurrent_workers_hash_once_and_keep_a_valid_store(tmp_path: Path) -> None:
    folders = [_model_folder(tmp_path, bytes([n]) * 4096, name=f"m{n}") for n in (1, 2)]
    cache, marks = tmp_path / "cache", tmp_path / "marks"
    marks.mkdir()
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_identify_in_a_process, args=(str(folders[n % 2]), str(cache), str(marks))) for n in range(6)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    results = sorted(p.read_text() for p in marks.glob("result-*"))
    assert results == sorted([_reference_digest(folders[0])] * 3 + [_reference_digest(folders[1])] * 3)
    assert len([p for p in marks.iterdir() if not p.name.startswith("result-")]) == 2  # one hash per folder
    store = json.loads((cache / "fingerprints.json").read_text())
    assert {key: entry["digest"] for key, entry in store["folders"].items()} == {
        str(f.resolve()): _reference_digest(f) for f in folders
    }
    assert not list(cache.glob(".fingerprints-*"))  # no temporary file left behind
