"""Word error rate between two texts, as fmeval compares an original and a perturbed output.

fmeval's general semantic robustness (seeds digest §2.3) scores open generation by the WER between the
model's output on the original input and on each perturbed input, through HF ``evaluate``'s ``wer``
(jiwer): whitespace runs of two or more characters become one space, the text is stripped and split on
spaces, and WER = (substitutions + deletions + insertions) / number of reference words.
"""

from __future__ import annotations

import re

_RUNS = re.compile(r"\s\s+")


def wer_words(text: str) -> list[str]:
    """jiwer's default transform: collapse whitespace runs, strip, split on single spaces."""
    text = _RUNS.sub(" ", text).strip()
    return text.split(" ") if text else []


def edit_distance(first: list[str], second: list[str]) -> int:
    """Levenshtein distance over words (unit costs for substitution, deletion and insertion)."""
    previous = list(range(len(second) + 1))
    for i, word in enumerate(first, start=1):
        current = [i]
        for j, other in enumerate(second, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word != other)))
        previous = current
    return previous[-1]


def word_error_rate(reference: str, hypothesis: str) -> float | None:
    """WER of ``hypothesis`` against ``reference``; 0 for two empty texts, None when only the reference is empty.

    ``word_error_rate("this is a cat", "this is a dog") == 0.25`` (one substitution in four words).
    """
    expected, got = wer_words(reference), wer_words(hypothesis)
    if not expected:
        return 0.0 if not got else None
    return edit_distance(expected, got) / len(expected)
