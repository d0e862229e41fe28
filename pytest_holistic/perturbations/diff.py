"""A word-level diff between a text and its perturbation, to shrink and report minimal counterexamples.

Character diffs of a typo'd sentence are unreadable and cannot be undone word by word; splitting both texts
into words and the separators between them gives hunks a reader recognises (``'bees' -> 'bess'``) and that
the Hypothesis strategies can switch on and off one at a time, so shrinking ends at the fewest changed words.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]+")
_WORD = re.compile(r"\w")


def tokens(text: str) -> list[str]:
    """Words, runs of whitespace and runs of punctuation, in order; ``"".join(tokens(t)) == t`` always."""
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class Hunk:
    """One change: original tokens ``start:end`` (empty for an insertion) read ``before`` and become ``after``."""

    start: int
    end: int
    before: str
    after: str


def _kind(token: str) -> int:
    return 0 if _WORD.match(token) else 1 if token.isspace() else 2


def _spans(a: list[str], b: list[str]) -> Iterator[tuple[int, int, int, int]]:
    """``(i1, i2, j1, j2)`` of each changed span, as small as the alignment allows.

    Only words and punctuation are matched, case-blind: spaces, every other token, would pair across the
    text (a lone space with a far-off one in a respaced sentence) and made each search quadratic. Matched
    tokens are anchors; one that differs in case is its own hunk, and so is each differing token of a gap
    between anchors that lines up token for token (typos, respacing). Any other gap ("is not" -> "isn't")
    is one hunk, less the spaces at its ends.
    """
    ia = [i for i, t in enumerate(a) if not t.isspace()]
    jb = [j for j, t in enumerate(b) if not t.isspace()]
    matcher = difflib.SequenceMatcher(None, [a[i].casefold() for i in ia], [b[j].casefold() for j in jb], autojunk=False)
    anchors = [(ia[x + k], jb[y + k]) for x, y, size in matcher.get_matching_blocks() for k in range(size)]
    i1 = j1 = 0
    for i2, j2 in [*anchors, (len(a), len(b))]:
        yield from _gap(a, b, i1, i2, j1, j2)
        if i2 < len(a) and a[i2] != b[j2]:
            yield i2, i2 + 1, j2, j2 + 1
        i1, j1 = i2 + 1, j2 + 1


def _gap(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int) -> Iterator[tuple[int, int, int, int]]:
    """The hunks of ``a[i1:i2]`` against ``b[j1:j2]``, a stretch between anchors."""
    if i2 - i1 == j2 - j1 and all(_kind(x) == _kind(y) for x, y in zip(a[i1:i2], b[j1:j2])):
        yield from ((i, i + 1, j1 + i - i1, j1 + i - i1 + 1) for i in range(i1, i2) if a[i] != b[j1 + i - i1])
        return
    head = i2 - i1 > 1 and j2 - j1 > 1 and a[i1].isspace() and b[j1].isspace()
    tail = i2 - i1 > 1 + head and j2 - j1 > 1 + head and a[i2 - 1].isspace() and b[j2 - 1].isspace()
    if head and a[i1] != b[j1]:
        yield i1, i1 + 1, j1, j1 + 1
    yield i1 + head, i2 - tail, j1 + head, j2 - tail
    if tail and a[i2 - 1] != b[j2 - 1]:
        yield i2 - 1, i2, j2 - 1, j2


def hunks(original: str, perturbed: str) -> tuple[Hunk, ...]:
    """The changes that turn ``original`` into ``perturbed``, in order; empty when the texts are equal."""
    a, b = tokens(original), tokens(perturbed)
    return tuple(Hunk(i1, i2, "".join(a[i1:i2]), "".join(b[j1:j2])) for i1, i2, j1, j2 in _spans(a, b))


def apply(original: str, perturbed: str, keep: Sequence[bool]) -> str:
    """``original`` with only the hunks ``i`` where ``keep[i]`` applied: all True gives ``perturbed``, all False ``original``."""
    return apply_hunks(original, hunks(original, perturbed), keep)


def apply_hunks(original: str, found: Sequence[Hunk], keep: Sequence[bool]) -> str:
    """:func:`apply` given the hunks already found, so a caller that needs them too diffs once."""
    if len(keep) != len(found):
        raise ValueError(f"keep has {len(keep)} flags but the texts differ in {len(found)} hunks")
    a = tokens(original)
    out: list[str] = []
    at = 0
    for hunk, kept in zip(found, keep):
        out.extend(a[at : hunk.start])
        out.append(hunk.after if kept else hunk.before)
        at = hunk.end
    out.extend(a[at:])
    return "".join(out)


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def describe(original: str, perturbed: str, limit: int = 5, width: int = 30) -> str:
    """One line such as ``2 changes: 'bees' -> 'bess', 'male' -> 'mlae'``, for a failure message or a note.

    At most ``limit`` hunks are spelled out (the rest are counted) and each side is cut to ``width``
    characters, so a heavily perturbed paragraph still fits on one line.
    """
    return describe_hunks(hunks(original, perturbed), limit, width)


def describe_hunks(found: Sequence[Hunk], limit: int = 5, width: int = 30) -> str:
    """:func:`describe` given the hunks already found."""
    if not found:
        return "no changes"
    noun = "change" if len(found) == 1 else "changes"
    shown = ", ".join(f"{_shorten(h.before, width)!r} -> {_shorten(h.after, width)!r}" for h in found[:limit])
    more = f", and {len(found) - limit} more" if len(found) > limit else ""
    return f"{len(found)} {noun}: {shown}{more}"


def _words(text: str) -> int:
    return sum(1 for token in tokens(text) if _WORD.match(token))


def changed_words(original: str, perturbed: str) -> int:
    """How many words the perturbation touched: per hunk the larger word count of its two sides.

    A hunk that only changes separators (an extra space, a dropped comma) still counts as one, so any text
    that differs from the original has at least one changed word and "fewest" orders every candidate.
    """
    return sum(max(_words(h.before), _words(h.after), 1) for h in hunks(original, perturbed))
