"""The word lists behind dialect, person names and misspellings: the project's own, or the user's copies of HELM's.

HELM downloads its SAE->AAVE dialect map and its person-name file at run time (into
``benchmark_output/perturbations/``) and ships its misspelling table inside its package. Those files are not
ours to redistribute, so the project ships its own lists (``data/perturbations``, sources in their headers),
and ``--holistic-word-lists DIR`` (ini ``holistic_word_lists``) reads the user's copies of HELM's files instead,
which gives HELM's exact variants. The perturbations apply HELM's rules either way; only the words differ.

A :class:`WordLists` holds paths only, so it is small, frozen and travels inside a ``Perturbation``; each file
is parsed once per process and path. Every process (xdist workers included) reads the same options, so each
finds the same files, and ``describe`` names them with their sha256 for the report's provenance.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ..errors import UserError
from ._tables import DATA, rows

KINDS = ("dialect", "person_names", "misspellings")
HELM_FILES: Mapping[str, str] = MappingProxyType(
    {"dialect": "SAE_to_AAVE_mapping.json", "person_names": "person_names.txt", "misspellings": "correct_to_misspelling.json"}
)
"""The name HELM gives each file."""
PROJECT_FILES: Mapping[str, str] = MappingProxyType(
    {"dialect": "sae_to_aae.tsv", "person_names": "person_names.tsv", "misspellings": "misspellings.tsv"}
)
LAYOUTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "dialect": ("", "perturbations/dialect", "benchmark_output/perturbations/dialect"),
        "person_names": ("", "perturbations/person_name/data", "benchmark_output/perturbations/person_name/data"),
        "misspellings": ("", "helm/benchmark/augmentations"),
    }
)
"""Where each file is looked for under the folder given, first hit wins: the folder itself, then HELM's layout
(a ``benchmark_output`` folder, or the folder above it; for misspellings, a ``site-packages`` folder)."""
FORMATS: Mapping[str, str] = MappingProxyType(
    {
        "dialect": 'a JSON object {"word": ["alternative", ...], ...}',
        "person_names": "lines name,name_type[,category,value]...",
        "misspellings": 'a JSON object {"word": ["misspelling", ...], ...}',
    }
)


@dataclass(frozen=True)
class NameEntry:
    """One line of a person-names file, read as HELM reads it: the name stripped and lower-cased, the rest as written."""

    name: str
    name_type: str
    categories: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Misspellings:
    """Correct word -> its misspellings, and HELM's one case-sensitive pattern over the words in file order.

    The words go into the pattern unescaped, as HELM does, so a word holding a space or an apostrophe
    (``about a``, ``isn't``) matches as written and the first word in the file wins where two could match.
    """

    table: Mapping[str, tuple[str, ...]]
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class WordLists:
    """Which file each list comes from: a user's copy of HELM's file, or None for the project's own list."""

    dialect: Path | None = None
    person_names: Path | None = None
    misspellings: Path | None = None

    def user_file(self, kind: str) -> Path | None:
        path: Path | None = getattr(self, kind)
        return path

    def file(self, kind: str) -> Path:
        return self.user_file(kind) or DATA / PROJECT_FILES[kind]

    def describe(self, kinds: tuple[str, ...]) -> dict[str, dict[str, str]]:
        """For the report: per list, the file read (a path, or the project's data file) and its sha256."""
        out = {}
        for kind in kinds:
            user = self.user_file(kind)
            shown = str(user) if user is not None else f"pytest_holistic/data/perturbations/{PROJECT_FILES[kind]}"
            origin = "user's copy of HELM's file" if user is not None else "pytest-holistic's own list"
            out[kind] = {"file": shown, "sha256": _sha256(self.file(kind)), "origin": origin}
        return out

    def dialect_map(self) -> Mapping[str, tuple[str, ...]]:
        return _dialect(self.dialect)

    def names(self) -> tuple[NameEntry, ...]:
        return _names(self.person_names)

    def misspelling_table(self) -> Misspellings:
        return _misspellings(self.misspellings)

    def check(self) -> None:
        """Parse every user file now, so a malformed one is a usage error before collection."""
        self.dialect_map()
        self.names()
        self.misspelling_table()


PROJECT = WordLists()
"""The project's own lists (immutable, so one shared instance is safe)."""


def find(folder: Path, origin: str) -> WordLists:
    """The user's copies of HELM's files under ``folder`` (see ``LAYOUTS``), checked; the project's lists for the rest."""
    names = ", ".join(HELM_FILES.values())
    if not folder.is_dir():
        raise UserError(f"{origin}: {folder} is not a folder; give the folder holding HELM's {names}, or its benchmark_output")
    found: dict[str, Path] = {}
    for kind in KINDS:
        for place in LAYOUTS[kind]:
            candidate = folder / place / HELM_FILES[kind]
            if candidate.is_file():
                found[kind] = candidate.resolve()
                break
    if not found:
        raise UserError(
            f"{origin}: {folder} holds none of {names} (directly or in HELM's benchmark_output/perturbations layout); "
            "point it at the folder that has them"
        )
    lists = WordLists(**found)
    lists.check()
    return lists


# -- loaders: one parse per process and path --------------------------------------------------------


def _malformed(path: Path, kind: str, problem: str) -> UserError:
    return UserError(
        f"word list {path}: {problem}; it must be HELM's {HELM_FILES[kind]} ({FORMATS[kind]}): "
        "fix or replace the file, or drop it from the --holistic-word-lists folder"
    )


@functools.cache
def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read(path: Path, kind: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise _malformed(path, kind, f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise _malformed(path, kind, f"cannot be read ({error.strerror or error})") from None


def _word_table(path: Path, kind: str) -> dict[str, tuple[str, ...]]:
    """A JSON object of word -> list of words, in file order."""
    try:
        data = json.loads(_read(path, kind))
    except json.JSONDecodeError as error:
        raise _malformed(path, kind, f"not JSON ({error.msg}, line {error.lineno})") from None
    if not isinstance(data, dict) or not data:
        raise _malformed(path, kind, "not a non-empty JSON object")
    table = {}
    for word, options in data.items():
        if not word or not isinstance(options, list) or not all(isinstance(option, str) for option in options):
            raise _malformed(path, kind, f"entry {word!r} is not a non-empty word with a list of strings")
        table[word] = tuple(options)
    return table


@functools.cache
def _dialect(path: Path | None) -> Mapping[str, tuple[str, ...]]:
    if path is None:
        return MappingProxyType({row[0]: tuple(row[1:]) for row in rows(PROJECT_FILES["dialect"])})
    return MappingProxyType(_word_table(path, "dialect"))


@functools.cache
def _names(path: Path | None) -> tuple[NameEntry, ...]:
    if path is None:
        return tuple(
            NameEntry(name.strip().lower(), kind, (("race", race),) + ((("gender", sex),) if sex != "-" else ()))
            for name, kind, race, sex in rows(PROJECT_FILES["person_names"])
        )
    text = _read(path, "person_names")
    lines = text.split("\n")  # HELM reads lines in text mode: universal newlines, then only "\n" removed
    if lines and lines[-1] == "":
        lines.pop()
    entries = []
    for number, line in enumerate(lines, 1):
        name, *rest = line.split(",")
        if not rest:
            raise _malformed(path, "person_names", f"line {number} ({line[:40]!r}) has no name_type after the name")
        name_type, *values = rest
        # An odd last field (a category with no value) is ignored, as HELM does.
        pairs = tuple((values[i], values[i + 1]) for i in range(0, len(values) - 1, 2))
        entries.append(NameEntry(name.strip().lower(), name_type, pairs))
    if not entries:
        raise _malformed(path, "person_names", "it has no lines")
    return tuple(entries)


@functools.cache
def _misspellings(path: Path | None) -> Misspellings:
    if path is None:
        table = {correct: tuple(wrong) for correct, *wrong in rows(PROJECT_FILES["misspellings"])}
    else:
        table = _word_table(path, "misspellings")
    try:
        pattern = re.compile(r"\b(" + "|".join(table) + r")\b")
    except re.error as error:
        where = path or DATA / PROJECT_FILES["misspellings"]
        raise _malformed(where, "misspellings", f"its words do not form a pattern ({error})") from None
    return Misspellings(MappingProxyType(table), pattern)
