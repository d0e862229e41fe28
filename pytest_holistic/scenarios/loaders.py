"""Where instances come from: a generator, a JSONL or CSV file, or a Hugging Face dataset.

A source is a callable that yields instances plus a ``provenance()`` dict for the report. The loaders keep
paths as written; ``Scenario.load`` calls ``resolve(base)`` with the folder of the test file pytest collected,
so a suite can ship ``data/x.jsonl`` next to its test file even when a helper module builds the scenario.
Calling a source that was never resolved reads relative paths against the current directory, like ``open()``.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from .. import _hub
from ..errors import ScenarioError, error_line
from .fields import Fields
from .instance import Instance


class Source(Protocol):
    def __call__(self) -> Iterable[Instance]: ...

    def provenance(self) -> dict[str, Any]: ...

    def resolve(self, base: Path) -> Source:
        """A copy whose relative paths start at ``base`` (the folder of the test file that uses the scenario)."""
        ...


def _resolve(path: str | Path, base: Path) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else base / candidate


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _require_file(path: Path) -> None:
    if path.is_dir():
        raise ScenarioError(f"scenario data file {path.absolute()} is a folder; point jsonl()/csv_file() at a file")
    if not path.is_file():
        raise ScenarioError(
            f"scenario data file {path.absolute()} does not exist; check the path "
            "(relative paths start at the folder of the test file that uses the scenario)"
        )


def _read_text(path: Path) -> str:
    """The whole file as UTF-8 (a BOM is dropped); an undecodable byte is named by its offset and line."""
    _require_file(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ScenarioError(f"scenario data file {path} cannot be read: {error.strerror or error}") from None
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = skip + error.start
        line = data.count(b"\n", 0, offset) + 1
        raise ScenarioError(
            f"{path}:{line}: not UTF-8 text (byte {offset} is 0x{data[offset]:02x}: {error.reason}); save the file as UTF-8"
        ) from None
    if not text.strip():
        raise ScenarioError(f"scenario data file {path} is empty; add instances (one per line or row)")
    return text


@dataclass(frozen=True)
class GeneratorSource:
    """Instances produced by a plain Python generator or iterable factory."""

    factory: Callable[[], Iterable[Instance]]

    def __call__(self) -> Iterator[Instance]:
        for value in self.factory():
            if not isinstance(value, Instance):
                name = getattr(self.factory, "__qualname__", repr(self.factory))
                raise ScenarioError(f"scenario {name} yielded {value!r}; a scenario must yield Instance objects")
            yield value

    def resolve(self, base: Path) -> GeneratorSource:
        """Generators read no files, so there is nothing to resolve."""
        return self

    def provenance(self) -> dict[str, Any]:
        code = getattr(self.factory, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}" if code else repr(self.factory)
        return {"kind": "python", "where": where}


@dataclass(frozen=True)
class JsonlSource:
    """A JSON Lines file; a relative ``path`` is read from the current directory until :meth:`resolve` anchors it."""

    path: Path
    fields: Fields = field(default_factory=Fields)
    split: str = "test"

    def resolve(self, base: Path) -> JsonlSource:
        return replace(self, path=_resolve(self.path, base))

    def __call__(self) -> Iterator[Instance]:
        index = 0
        for line_number, line in enumerate(_read_text(self.path).splitlines(), start=1):
            if not line.strip():
                continue
            origin = f"{self.path}:{line_number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ScenarioError(
                    f"{origin}: not valid JSON ({error.msg} at column {error.colno}); each line must be one JSON object"
                ) from None
            if not isinstance(row, dict):
                raise ScenarioError(f"{origin}: expected a JSON object, got {type(row).__name__}; write one JSON object per line")
            yield self.fields.to_instance(row, index, self.split, origin)
            index += 1

    def provenance(self) -> dict[str, Any]:
        return {"kind": "jsonl", "path": str(self.path), "sha256": _sha256(self.path) if self.path.is_file() else None}


@dataclass(frozen=True)
class CsvSource:
    """A CSV file with a header row; a relative ``path`` is read from the current directory until :meth:`resolve` anchors it."""

    path: Path
    fields: Fields = field(default_factory=Fields)
    split: str = "test"
    delimiter: str = ","

    def resolve(self, base: Path) -> CsvSource:
        return replace(self, path=_resolve(self.path, base))

    def __call__(self) -> Iterator[Instance]:
        if not isinstance(self.delimiter, str) or len(self.delimiter) != 1:
            raise ScenarioError(f"csv_file({self.path.name!r}, delimiter={self.delimiter!r}): use a one-character delimiter")
        text = _read_text(self.path)
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=self.delimiter)
        header = self._header(reader, len(text))
        index = 0
        while (row := self._next_row(reader, len(text))) is not None:
            origin = f"{self.path}:{reader.line_num}"
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise ScenarioError(
                    f"{origin}: {len(row)} field(s), but the header has {len(header)} ({', '.join(header)}); "
                    f"quote values that contain {self.delimiter!r} or line breaks, and close every quote"
                )
            yield self.fields.to_instance(dict(zip(header, row)), index, self.split, origin)
            index += 1

    def _next_row(self, reader: Any, size: int) -> list[str] | None:
        """The next row; a field may be as long as the file (already in memory), as a JSONL value may.

        The csv module's field limit (128 KiB by default) is process-wide, so it is raised for this read only.
        """
        previous = csv.field_size_limit(max(size, csv.field_size_limit()))
        try:
            row: list[str] = next(reader)
            return row
        except StopIteration:
            return None
        except csv.Error as error:
            raise ScenarioError(f"{self.path}:{reader.line_num}: not valid CSV ({error}); fix the row") from None
        finally:
            csv.field_size_limit(previous)

    def _header(self, reader: Any, size: int) -> list[str]:
        header = self._next_row(reader, size)
        if not header or not any(name.strip() for name in header):
            raise ScenarioError(f"{self.path}: the first line must be a header row naming the columns")
        repeated = sorted({name for name in header if header.count(name) > 1})
        if repeated:
            shown = ", ".join(map(repr, repeated))
            raise ScenarioError(f"{self.path}:1: header repeats column(s) {shown}; give every column its own name")
        return header

    def provenance(self) -> dict[str, Any]:
        return {"kind": "csv", "path": str(self.path), "sha256": _sha256(self.path) if self.path.is_file() else None}


class DatasetUnavailable(ScenarioError):
    """The hub cannot serve a dataset and there is no local copy: ``--holistic-source auto`` falls back on this one.

    ``reason`` is the message without its fix, for the line that says why a scenario used its shipped data.
    """

    def __init__(self, reason: str, fix: str) -> None:
        super().__init__(f"{reason}; {fix}")
        self.reason = reason


@dataclass(frozen=True)
class HubSource:
    """A dataset read with ``datasets.load_dataset``: a hub name (pin ``revision``) or a local folder.

    ``splits`` maps the dataset's split names to the split names the scenario uses
    (``{"validation": "validation", "train": "train"}``); by default every split is read as is.
    Until :meth:`resolve` is called, ``datasets`` looks up a relative local folder from the current directory.
    A local copy of the hub dataset in its real schema (``DATA_DIR/org/name/``, see :meth:`with_data_dir`) is read
    through the same loader instead of the hub; ``copy`` is that folder once found.
    ``sample`` maps a dataset split to a function of its ``datasets.Dataset`` applied before any row is read, for a
    split too large to read whole (HELM's WMT14 shuffles its millions of training pairs and keeps 20,000).
    """

    name: str
    config: str | None = None
    revision: str | None = None
    splits: Mapping[str, str] | None = None
    fields: Fields = field(default_factory=Fields)
    data_files: Any = None
    data_dir: Path | None = None  # --holistic-data-dir: where the user keeps copies of hub datasets
    copy: Path | None = None  # the folder DATA_DIR/name when it exists
    sample: Mapping[str, Callable[[Any], Any]] | None = None

    def resolve(self, base: Path) -> HubSource:
        """Use the folder ``base / name`` when it exists; otherwise ``name`` is a hub dataset and stays as is."""
        local = _resolve(self.name, base)
        return replace(self, name=str(local)) if local.exists() else self

    def with_data_dir(self, data_dir: Path | None) -> HubSource:
        """Read ``data_dir / name`` (a copy in the real schema) instead of the hub when that folder exists."""
        if data_dir is None or Path(self.name).exists():
            return self
        folder = data_dir / self.name
        return replace(self, data_dir=data_dir, copy=folder if folder.is_dir() else None)

    def _folder(self) -> Path | None:
        """The local folder this source reads, or None for the hub (and the local HF cache)."""
        if self.copy is not None:
            return self.copy
        return Path(self.name) if Path(self.name).is_dir() else None

    def reached(self) -> str:
        """How a load that worked got the dataset, for the report's ``source_reason``."""
        if self._folder() is not None:
            return f"a local copy at {self._folder()}" + (" (--holistic-data-dir)" if self.copy is not None else "")
        if _hub.offline() or os.environ.get(_hub.UNREACHABLE):
            return "the dataset is in the local HF cache"
        return "the hub is reachable"

    def unavailable(self) -> str | None:
        """Why loading would fail for want of the dataset (no hub, no cache, no copy), decided without ``datasets``.

        None means a load is worth trying: a local folder, a reachable hub, or the dataset in the local HF cache.
        Probes the hub once per process (at most 3 s) unless the user chose offline.
        """
        if self._folder() is not None:
            return None
        endpoint = os.environ.get(_hub.UNREACHABLE) or None
        if not _hub.offline() and endpoint is None:
            endpoint = _offline_unless_reachable()
            if endpoint is None:
                return None  # the hub answers (or huggingface_hub is already loaded and decides): try it
        if _hub.dataset_cached(self.name):
            return None
        return self._missing(endpoint)

    def _missing(self, endpoint: str | None) -> str:
        where = f"the hub ({endpoint}) cannot be reached" if endpoint else "the hub is switched off (HF_HUB_OFFLINE)"
        return f"could not load dataset {self.name!r}: {where} and the dataset is not in the local HF cache{self._no_copy()}"

    def _no_copy(self) -> str:
        if self.data_dir is None:
            return ""
        return f" nor under --holistic-data-dir ({self.data_dir / self.name} does not exist)"

    def _fix(self) -> str:
        target = self.data_dir / self.name if self.data_dir is not None else f"DIR/{self.name}/"
        return (
            f"put a copy in its real schema (json/jsonl/parquet/csv files or a save_to_disk folder) under "
            f"--holistic-data-dir DIR ({target}), or use --holistic-source=local"
        )

    def __call__(self) -> Iterator[Instance]:
        folder = self._folder()
        unreachable = None
        if folder is None:
            unreachable = os.environ.get(_hub.UNREACHABLE) or _offline_unless_reachable()
        import datasets  # heavy: imported only when a hub scenario is loaded

        failure: ScenarioError | None = None
        try:
            loaded = (
                _read_folder(datasets, folder, self.config, self.data_files)
                if folder is not None
                else (datasets.load_dataset(self.name, self.config, revision=self.revision, data_files=self.data_files))
            )
        except Exception as error:  # datasets raises many types; the user needs the name and the fix
            failure = self._failure(error, folder, unreachable)
        if failure is not None:  # raised outside the except block, so the message is not chained to datasets' error
            raise failure
        wanted = self.splits or {name: name for name in loaded}
        shown = str(folder) if folder is not None else self.name
        for hub_split, split in wanted.items():
            if hub_split not in loaded:
                raise ScenarioError(f"dataset {shown!r} has no split {hub_split!r} (it has {', '.join(loaded)})")
            rows = loaded[hub_split]
            if self.sample is not None and hub_split in self.sample:
                rows = self.sample[hub_split](rows)
            for index, row in enumerate(rows):
                yield self.fields.to_instance(row, index, split, f"{shown}[{hub_split}][{index}]")

    def _failure(self, error: Exception, folder: Path | None, unreachable: str | None) -> ScenarioError:
        first_line = error_line(error)
        if folder is not None:
            return ScenarioError(
                f"could not read dataset folder {folder} (config {self.config!r}): {first_line}; it must hold the dataset's "
                "files in their real schema (json/jsonl/parquet/csv, split names in the file names) or a save_to_disk folder"
            )
        if unreachable or _hub.offline():
            return DatasetUnavailable(self._missing(unreachable), self._fix())
        what = f"dataset {self.name!r} (config {self.config!r}, revision {self.revision!r})"
        return DatasetUnavailable(
            f"could not load {what}: {first_line}{self._no_copy()}", f"check the name and revision, or {self._fix()}"
        )

    def provenance(self) -> dict[str, Any]:
        found: dict[str, Any] = {"kind": "hf", "name": self.name, "config": self.config, "revision": self.revision}
        if self.sample:  # which rows of a split were read, in the sampling function's own words
            found["sampled"] = {
                split: (pick.__doc__ or pick.__name__).strip().split("\n")[0] for split, pick in self.sample.items()
            }
        if self.copy is not None:  # a user's copy: the suite's pinned revision says nothing about it
            found.update(revision=None, path=str(self.copy))
        return found


def _read_folder(datasets: Any, folder: Path, config: str | None, data_files: Any) -> Any:
    """A local dataset folder: a ``save_to_disk`` folder, or data files that ``load_dataset`` reads by extension.

    A config names a subfolder when one exists (the hub's layout, e.g. ``cais/mmlu/all/``); otherwise it is passed
    on only when a dataset card (README.md) can define it, as a plain folder of files has one config.
    """
    sub = folder / config if config and (folder / config).is_dir() else folder
    if (sub / "dataset_dict.json").is_file() or (sub / "state.json").is_file():
        saved = datasets.load_from_disk(str(sub))
        return saved if isinstance(saved, datasets.DatasetDict) else {str(saved.split or "train"): saved}
    card = (folder / "README.md").is_file()
    name = config if sub == folder and config and card else None
    if data_files is None and not card:
        data_files = _splits_by_file_name(sub)
    return datasets.load_dataset(str(sub), name, data_files=data_files)


_DATA_SUFFIXES = (".parquet", ".jsonl", ".json", ".csv", ".arrow")


def _splits_by_file_name(folder: Path) -> dict[str, list[str]] | None:
    """Split names exactly as the files are named (``dev.jsonl``, ``data/dev-00000-of-00001.parquet`` -> ``dev``).

    Left to itself, ``datasets`` renames recognised split words (``dev`` becomes ``validation``), so a copy of a
    dataset whose hub card declares a ``dev`` split would lose it. None when the folder holds no data files.
    """
    found: dict[str, list[str]] = {}
    for path in sorted([*folder.glob("*"), *folder.glob("data/*")]):
        if path.is_file() and path.name.endswith(_DATA_SUFFIXES):
            split = path.name.split(".", 1)[0].split("-", 1)[0]
            found.setdefault(split, []).append(str(path.relative_to(folder)))
    return found or None


def _offline_unless_reachable() -> str | None:
    """Switch this process to the local HF cache when one probe finds the hub unreachable; the endpoint, if so.

    Only possible before huggingface_hub is imported (it reads ``HF_HUB_OFFLINE`` once); later, or when the
    user already chose offline, this does nothing and returns None.
    """
    if _hub.offline() or "huggingface_hub" in sys.modules:
        return None
    endpoint = _hub.unreachable_hub()
    if endpoint is not None:
        os.environ["HF_HUB_OFFLINE"] = "1"  # later loads in this process (datasets, models) read the cache at once too
        os.environ[_hub.UNREACHABLE] = endpoint  # so their messages blame the network, not a setting the user never made
    return endpoint


def jsonl(path: str | Path, fields: Fields | None = None, *, split: str = "test") -> JsonlSource:
    """Read instances from a JSON Lines file; rows without a ``split`` field get ``split``.

    A relative ``path`` starts at the folder of the test file that uses the scenario (resolved at load time).
    """
    return JsonlSource(Path(path).expanduser(), fields or Fields(), split)


def csv_file(path: str | Path, fields: Fields | None = None, *, split: str = "test", delimiter: str = ",") -> CsvSource:
    """Read instances from a CSV file with a header row.

    A relative ``path`` starts at the folder of the test file that uses the scenario (resolved at load time).
    """
    return CsvSource(Path(path).expanduser(), fields or Fields(), split, delimiter)


def hf(
    name: str,
    config: str | None = None,
    *,
    revision: str | None = None,
    splits: Mapping[str, str] | Sequence[str] | None = None,
    fields: Fields | None = None,
    data_files: Any = None,
    sample: Mapping[str, Callable[[Any], Any]] | None = None,
) -> HubSource:
    """Read a Hugging Face dataset through ``datasets.load_dataset`` (hub name or local folder).

    ``name`` is a local folder if it exists next to the test file that uses the scenario (checked at load time),
    otherwise a hub dataset name. ``sample`` (dataset split -> function of its ``datasets.Dataset``) picks the rows
    of a split before they are read.
    """
    if splits is not None and not isinstance(splits, Mapping):
        splits = {name_: name_ for name_ in splits}
    return HubSource(name, config, revision, splits, fields or Fields(), data_files, sample=sample)
