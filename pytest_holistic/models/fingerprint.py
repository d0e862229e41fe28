"""The identity of a local model folder, hashed once and kept, so a warm run reads no weight byte.

The identity is the sha256 of every weight file and ``config.json``: nothing cheaper is sound. A safetensors
header, for one, lists each tensor's dtype, shape and offsets but not its values, so two fine-tunes of one base
model share it. Hashing reads every byte (seconds per GB, minutes for a 70B model, in every xdist worker), so the
digest is kept in ``fingerprints.json`` under the pytest-holistic cache folder, with a stamp of each file it covers:
name, size, mtime, ctime and inode. As long as every stamp matches, the kept digest is the identity and no weight
file is opened. A changed, added, removed or replaced file changes a stamp and the folder is hashed again.

The store is a cache, never a source of truth: an unreadable, corrupt or unwritable store is ignored (and
rewritten when possible), and hashing goes on as before. Writers take a file lock and replace the store with
``os.replace``, so concurrent xdist workers neither corrupt it nor hash the same folder at once: the first
hashes, the others wait, then read its digest.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..paths import cache_root

IDENTITY_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf")
"""Files whose bytes are the weights; with ``config.json`` they make the identity of a folder."""

STORE_NAME = "fingerprints.json"
STORE_VERSION = 1
MAX_ENTRIES = 256
"""Folders kept at most (the most recently hashed); entries of folders that no longer exist are dropped first."""

RACY_NS = 2_000_000_000
"""A file modified this close to its hash may have changed again within the file system's timestamp granularity
(up to 2 s on FAT, 1 s on some network file systems) with its stamp unchanged; such a digest is not trusted."""

Stamp = list[Any]
"""``[name, size, mtime_ns, ctime_ns, inode]`` of one file (a list, because that is what JSON gives back)."""


def identity_files(folder: Path) -> list[Path]:
    """The weight files and ``config.json`` of a folder, sorted by name (the order the digest reads them in)."""
    return sorted(p for p in folder.iterdir() if p.suffix in IDENTITY_SUFFIXES or p.name == "config.json")


def stamps(files: list[Path]) -> list[Stamp]:
    """What must stay the same for a kept digest to hold; reads metadata only.

    ctime and inode catch what size and mtime miss: a file replaced by one of the same size with its mtime
    preserved (``cp -p``, ``rsync -a``) gets a new inode or ctime. A false change only costs one more hash.
    Symlinks are followed, so a folder linking into the HF cache is stamped by its blobs.
    """
    result = []
    for path in files:
        info = path.stat()
        result.append([path.name, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino])
    return result


def content_digest(files: list[Path]) -> str:
    """sha256 over each file's name and bytes: the identity itself (the value earlier versions computed every run)."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()[:16]


def store_path(root: Path | None = None) -> Path:
    """``fingerprints.json`` in ``root``, by default the pytest-holistic cache folder (``PYTEST_HOLISTIC_CACHE_DIR``)."""
    return (root if root is not None else cache_root()) / STORE_NAME


def read_store(path: Path) -> dict[str, dict[str, Any]]:
    """The kept entries by folder; empty when the store is missing, unreadable, corrupt or of another version."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != STORE_VERSION or not isinstance(data.get("folders"), dict):
        return {}
    return {key: entry for key, entry in data["folders"].items() if isinstance(entry, dict)}


def _write_store(path: Path, entries: dict[str, dict[str, Any]]) -> None:
    """Replace the store atomically (a reader sees the old or the new file, never half of one); failures are ignored."""
    staging: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".fingerprints-", suffix=".tmp", delete=False) as out:
            staging = out.name
            json.dump({"version": STORE_VERSION, "folders": entries}, out, indent=1)
        os.replace(staging, path)
        staging = None
    except OSError:
        pass  # a read-only or full cache folder: the digest is still right, only not kept
    finally:
        if staging is not None:
            with contextlib.suppress(OSError):
                os.unlink(staging)


def _pruned(entries: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Drop folders that are gone (temporary test folders), then all but the ``MAX_ENTRIES`` most recently hashed."""
    alive = {key: entry for key, entry in entries.items() if Path(key).is_dir()}
    newest = sorted(alive, key=lambda key: _hashed_at(alive[key]), reverse=True)[:MAX_ENTRIES]
    return {key: alive[key] for key in newest}


def _hashed_at(entry: dict[str, Any]) -> int:
    value = entry.get("hashed_at_ns")
    return value if isinstance(value, int) else 0


def kept_digest(entry: dict[str, Any] | None, current: list[Stamp]) -> str | None:
    """The kept digest when its stamps equal ``current`` and no file was modified racily close to its hash."""
    if entry is None or entry.get("files") != current:
        return None
    digest = entry.get("digest")
    if not isinstance(digest, str) or not digest.startswith("sha256:"):
        return None
    hashed_at = _hashed_at(entry)
    if any(stamp[2] >= hashed_at - RACY_NS for stamp in current):  # mtime, as a write sets it (git's racy-clean rule)
        return None
    return digest


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock beside the store; without one (unwritable folder, no flock) go on unlocked."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.with_name(path.name + ".lock").open("a")
    except OSError:
        yield
        return
    with handle:
        with contextlib.suppress(OSError):
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield  # closing the handle releases the lock


def folder_digest(folder: Path, root: Path | None = None) -> str:
    """The identity of a local model folder: kept when its files' stamps match, else hashed (once, under a lock) and kept."""
    folder = folder.resolve()
    key = str(folder)
    files = identity_files(folder)
    store = store_path(root)
    kept = kept_digest(read_store(store).get(key), stamps(files))
    if kept is not None:
        return kept
    with _locked(store):
        entries = read_store(store)  # another worker may have hashed it while this one waited for the lock
        before = stamps(files)
        kept = kept_digest(entries.get(key), before)
        if kept is not None:
            return kept
        hashed_at = time.time_ns()
        digest = content_digest(files)
        if stamps(files) == before:  # a file written while it was read: the digest is right for no version of it
            entries[key] = {"files": before, "digest": digest, "hashed_at_ns": hashed_at}
            _write_store(store, _pruned(entries))
    return digest
