"""WordNet 3.0's sense index (``index.sense``) derived from its data and index files.

nltk (>= 3.9) opens ``index.sense`` while reading WordNet, but Debian ships it in a package of its own
(``wordnet-sense-index``), apart from the dict files of ``wordnet-base``. Everything in it is in those files
(senseidx(5WN)): one line ``sense_key synset_offset sense_number tag_cnt`` per (lemma, synset), sorted by
byte order, where the sense key is ``lemma%ss_type:lex_filenum:lex_id:head_word:head_id``:

* ``lemma``, ``lex_filenum``, ``lex_id`` come from the synset's line in ``data.<pos>`` (the lemma lower-cased
  and without an adjective's syntactic marker such as ``(a)``); ``ss_type`` is 1 noun, 2 verb, 3 adjective,
  4 adverb, 5 adjective satellite;
* ``head_word`` and ``head_id`` are set for satellites only: the first word of the head synset that the
  satellite's similar-to (``&``) pointer names, and that word's ``lex_id``;
* ``sense_number`` is the synset's 1-based place among the lemma's offsets in ``index.<pos>``;
* ``tag_cnt`` is the sense's count in ``cntlist.rev`` (``sense_key sense_number tag_cnt``), 0 without one.

A lemma written twice in one synset with different case (``Earth 0 earth 1``) has one sense there: the first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

_POS_FILES = ("adj", "adv", "noun", "verb")
_SS_TYPE = {"n": 1, "v": 2, "a": 3, "r": 4, "s": 5}
_MARKER = re.compile(r"\([a-z]+\)$")
_KEY_MARKER = re.compile(r"\([a-z]+\)(?=:)")
"""cntlist.rev writes a satellite's head word with its marker (``above%5:00:00:preceding(a):00``)."""


def _records(path: Path) -> Iterator[list[str]]:
    """The fields of each line of a WordNet database file, the licence header (indented lines) skipped."""
    with path.open("rb") as lines:
        for raw in lines:
            if not raw.startswith(b"  "):
                yield raw.decode("utf-8").split()


def _synsets(folder: Path) -> dict[tuple[str, int], tuple[int, str, list[tuple[str, int]], tuple[str, int] | None]]:
    """(pos file, offset) -> (lex_filenum, ss_type, [(lemma, lex_id)], (pos file, offset) of a satellite's head)."""
    synsets = {}
    for name in _POS_FILES:
        for fields in _records(folder / f"data.{name}"):
            offset, lex_filenum, ss_type = int(fields[0]), int(fields[1]), fields[2]
            count = int(fields[3], 16)
            words = [(_MARKER.sub("", fields[4 + 2 * k]).lower(), int(fields[5 + 2 * k], 16)) for k in range(count)]
            at = 4 + 2 * count
            head = None
            for k in range(int(fields[at])):
                symbol, target, pos = fields[at + 1 + 4 * k : at + 4 + 4 * k]
                if ss_type == "s" and symbol == "&" and head is None:
                    head = ("adj" if pos in ("a", "s") else name, int(target))
            synsets[(name, offset)] = (lex_filenum, ss_type, words, head)
    return synsets


def _sense_numbers(folder: Path) -> dict[tuple[str, str, int], int]:
    """(pos file, lemma, offset) -> the sense's 1-based number in ``index.<pos>``."""
    numbers = {}
    for name in _POS_FILES:
        for fields in _records(folder / f"index.{name}"):
            synset_count, pointer_count = int(fields[2]), int(fields[3])
            offsets = fields[6 + pointer_count : 6 + pointer_count + synset_count]
            for number, offset in enumerate(offsets, 1):
                numbers[(name, fields[0], int(offset))] = number
    return numbers


def _tag_counts(folder: Path) -> dict[str, int]:
    path = folder / "cntlist.rev"
    if not path.is_file():
        return {}
    return {_KEY_MARKER.sub("", fields[0]): int(fields[2]) for fields in _records(path) if len(fields) == 3}


def sense_index_text(folder: Path) -> str:
    """``index.sense`` for the WordNet 3.0 dict files in ``folder``; KeyError or ValueError on malformed files."""
    synsets = _synsets(folder)
    numbers = _sense_numbers(folder)
    counts = _tag_counts(folder)
    lines: list[tuple[bytes, str]] = []
    seen: set[tuple[str, str, int]] = set()
    for (name, offset), (lex_filenum, ss_type, words, head) in synsets.items():
        head_word, head_id = "", ""
        if head is not None:
            head_lemma, head_lex_id = synsets[head][2][0]
            head_word, head_id = head_lemma, f"{head_lex_id:02d}"
        for lemma, lex_id in words:
            if (name, lemma, offset) in seen:
                continue
            seen.add((name, lemma, offset))
            key = f"{lemma}%{_SS_TYPE[ss_type]}:{lex_filenum:02d}:{lex_id:02d}:{head_word}:{head_id}"
            lines.append((key.encode("utf-8"), f"{key} {offset:08d} {numbers[(name, lemma, offset)]} {counts.get(key, 0)}\n"))
    return "".join(line for _key, line in sorted(lines))
