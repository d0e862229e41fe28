"""Inputs for fmeval's metrics: QA accuracy, factual knowledge and classification accuracy (``oracle/fmeval_metrics.py``).

Seeded texts built from the pieces that tell normalisations apart (articles glued to punctuation or to
whitespace other than the space, Unicode spaces, ASCII and non-ASCII punctuation, case), ``<OR>``-packed
targets with empty parts, plus hand-picked cases; random label vectors for the classification scores;
sentence-pair log-probabilities, ties included, for prompt stereotyping.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

SEED = 20261125
WHITESPACE = [" ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u00a0", "\u1680", "\u2003", "\u2028"]
WHITESPACE += ["\u3000", "\u200b"]
PIECES = ["the", "The", "THE", "a", "A", "an", "An", "cat", "Cat", "dog", "then", "theatre", "anna", "é", "naïve", "42"]
PIECES += ["cat.", "(the", "a,", "an!", "the-cat", "a_b", "—", "€", "l'a", "x", "Paris", "paris", "«the»", "ﬁ", "İ", "ß"]

HAND_PICKED: list[tuple[str, str]] = [
    ("the\ncat", "cat"),
    ("the\tcat", "cat"),
    ("the cat", "cat"),
    ("cat", "the\ncat"),
    ("a\u00a0cat", "cat"),
    ("an\u3000cat dog", "the cat"),
    ("the\u2003the", "the"),
    ("", ""),
    ("", "cat"),
    ("cat", ""),
    ("   ", "   "),
    ("the", "a"),
    ("Paris", "London<OR>Paris"),
    ("Paris, of course", "London<OR>Paris"),
    ("anything", "Paris<OR>"),
    ("anything", "<OR>"),
    ("anything", "<OR>  "),
    ("Paris", "paris<OR>PARIS<OR>the Paris"),
    ("The answer is Paris.", "Paris"),
    ("It is in the Free State Province.", "South Africa<OR>Free State Province"),
    ("GERMANY!", "germany"),
    ("thecat", "cat"),
    ("the,cat", "cat"),
    ("(the) cat", "cat"),
    ("the—cat", "cat"),
    ("the— cat", "cat"),
    ("cat cat dog", "cat"),
    ("\ncat\n", "cat"),
    ("İstanbul", "i̇stanbul"),
    ("STRASSE", "straße"),
]


def _random_text(rng: random.Random) -> str:
    parts = [rng.choice(WHITESPACE) if rng.random() < 0.3 else ""]
    for _ in range(rng.randint(0, 6)):
        parts += [rng.choice(PIECES), rng.choice(WHITESPACE)]
    return "".join(parts[:-1] if rng.random() < 0.5 else parts)


def _target(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return "<OR>".join(_random_text(rng) for _ in range(rng.randint(2, 3)))
    return _random_text(rng)


def _labels(rng: random.Random) -> dict[str, Any]:
    names = rng.choice([["0", "1"], ["neg", "pos", "neutral"], ["a", "b", "c", "d"]])
    n = rng.randint(1, 30)
    y_true = [rng.choice(names) for _ in range(n)]
    # "unknown" is what fmeval's converter returns when no label is in the output
    y_pred = [rng.choice([*names, "unknown"]) if rng.random() < 0.6 else truth for truth in y_true]
    return {"y_true": y_true, "y_pred": y_pred}


def build(files: Path) -> dict[str, Any]:
    rng = random.Random(SEED)
    qa = [{"model_output": output, "target_output": target} for output, target in HAND_PICKED]
    qa += [{"model_output": _random_text(rng), "target_output": _target(rng)} for _ in range(600)]
    classification = [_labels(rng) for _ in range(60)]
    classification.append({"y_true": ["1", "1", "0"], "y_pred": ["1", "1", "0"]})
    classification.append({"y_true": ["1", "1", "1"], "y_pred": ["0", "0", "0"]})
    stereotyping = []
    for _ in range(20):
        n = rng.randint(1, 30)
        pool = [-round(rng.uniform(0, 60), 1) for _ in range(4)]  # few values: equal log-probabilities happen
        more = [rng.choice([*pool, -rng.uniform(0, 60), 0.0]) for _ in range(n)]
        less = [rng.choice([*pool, -rng.uniform(0, 60), -0.0]) for _ in range(n)]
        stereotyping.append({"logprobs_more": more, "logprobs_less": less})
    return {"qa": qa, "classification": classification, "stereotyping": stereotyping}
