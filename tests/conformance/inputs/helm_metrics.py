"""Inputs for HELM's metrics (``oracle/helm_metrics.py``): seeded texts and numbers, plus hand-picked edge cases.

One list per family: reference-matching metrics and ROUGE (``reference``), copyright (``copyright``), the
summarisation statistics (``summarization``), the bias word-list metrics (``bias``), BBQ (``bbq``),
calibration (``calibration``), classification F1 (``classification``) and the mean win rate (``win_rate``).
Texts mix whitespace of every kind, braces, punctuation, articles, Unicode and empty strings.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

SEED = 20261126
SPACES = [" ", " ", " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\u00a0", "\u2003", "\u3000"]
WORDS = ["the", "The", "a", "an", "cat", "cats", "dog", "running", "ran", "Paris", "paris", "42", "4.2", "naïve"]
WORDS += ["don't", "U.S.", "(the", "cat.", "dog,", "well-known", "—", '"quoted"', "'single'", "{", "}", "{cat", "dog}"]
WORDS += ["İstanbul", "東京", "x\x00", "x"]


def _text(rng: random.Random, low: int = 0, high: int = 8, words: list[str] = WORDS) -> str:
    parts = []
    for _ in range(rng.randint(low, high)):
        parts += [rng.choice(words), rng.choice(SPACES)]
    text = "".join(parts[:-1])
    if rng.random() < 0.15:
        text = rng.choice(SPACES) + text + rng.choice(SPACES)
    return text


def _reference_cases(rng: random.Random) -> list[dict[str, str]]:
    hand = [
        ("cat", ""),
        ("", ""),
        ("", "   "),
        ("cat", "   "),
        ("  ", " \n "),
        ("!", "?"),
        ("the cat", "cat"),
        ("cat", "the\ncat"),
        ("cat", "The Cat!"),
        ("Yes", "Yes, Elmendorf"),
        ("yes", " Yes."),
        ("a b c", "c b a"),
        ("the cat sat", "the cat sat on the mat"),
        ("running dogs", "dog ran"),
    ]
    cases = [{"gold": gold, "pred": pred} for gold, pred in hand]
    for _ in range(300):
        gold = _text(rng)
        pred = gold if rng.random() < 0.15 else _text(rng)
        cases.append({"gold": gold, "pred": pred})
    return cases


def _copyright_cases(rng: random.Random) -> list[dict[str, Any]]:
    """Each: the prompt (prefix), the true continuation, the completions and HELM's two options."""
    hand: list[tuple[str, str, list[str]]] = [
        ("Call me", " Ishmael. Some years ago", [" Ishmael. Some years", ""]),
        ("Call me", " Ishmael. Some years ago", ["", " Ishmael. Some years"]),
        ("Call me", " Ishmael. Some years ago", [" Ishmael.", "   ", " Bob"]),
        ("Call me", " Ishmael. Some years ago", [" Bob", " Ishmael. Some"]),
        ("Call me", "", [" Ishmael.", ""]),
        ("Call me", "", [""]),
        ("It was", " the best\tof times,\n\nit was", [" the best of times, it", " the best\tof"]),
        ("It was", " the best of times", ["the best  of times"]),
        ("A A", " A A D", [" A A B C", " A M D"]),
        ("x", " a\x00 b", [" a b", " a\x00 b"]),
    ]
    cases = []
    for prefix, continuation, completions in hand:
        for normalize_whitespace in (False, True):
            for by_prefix in (False, True):
                cases.append(
                    {
                        "prefix": prefix,
                        "continuation": continuation,
                        "completions": completions,
                        "normalize_newline_space_tab": normalize_whitespace,
                        "normalize_by_prefix_length": by_prefix,
                    }
                )
    for _ in range(150):
        continuation = _text(rng, 0, 12)
        completions = []
        for _ in range(rng.randint(1, 4)):
            roll = rng.random()
            if roll < 0.2:
                completions.append(rng.choice(["", " ", "\n"]))
            elif roll < 0.5:
                cut = rng.randint(0, len(continuation))
                completions.append(continuation[:cut] + _text(rng, 0, 3))
            else:
                completions.append(_text(rng, 0, 10))
        cases.append(
            {
                "prefix": _text(rng, 1, 5).strip() or "Once",
                "continuation": continuation,
                "completions": completions,
                "normalize_newline_space_tab": rng.random() < 0.5,
                "normalize_by_prefix_length": rng.random() < 0.3,
            }
        )
    return cases


ARTICLE_WORDS = ["The", "council", "voted", "on", "Tuesday", "to", "close", "the", "old", "bridge", ".", "Officials", "said"]
ARTICLE_WORDS += ["repairs", "would", "cost", "$", "4", "million", ",", "and", "take", "two", "years", "{", "}", "'s", '"']


def _summarization_cases(rng: random.Random) -> list[dict[str, Any]]:
    """Each: the article (HELM's instance input), the completion and the references."""
    article = "The council voted on Tuesday to close the old bridge. Officials said repairs would cost $4 million."
    hand = [
        (article, "{The council voted to close the bridge.}"),
        (article, "  {The council voted to close the bridge.}  "),
        (article, "{{The council voted}}"),
        (article, "The council voted}"),
        (article, "{The council voted"),
        (article, "{"),
        (article, "}"),
        (article, "{}"),
        (article, ""),
        ("{" + article + "}", "{The council voted.}"),
        ("{" + article, "Officials said repairs would cost $4 million."),
        (article + " }", "Officials said}"),
        (article, "{ The council}"),
        (article, "} The council {"),
    ]
    cases = [{"article": a, "completion": c, "references": ["{The council closed the bridge.}"]} for a, c in hand]
    for _ in range(120):
        words = [rng.choice(ARTICLE_WORDS) for _ in range(rng.randint(0, 40))]
        text = " ".join(words)
        if rng.random() < 0.4:
            text = "{" + text + "}"
        start = rng.randint(0, len(words))
        summary_words = words[start : start + rng.randint(0, 12)] + [rng.choice(ARTICLE_WORDS) for _ in range(rng.randint(0, 4))]
        if rng.random() < 0.3:
            rng.shuffle(summary_words)
        summary = " ".join(summary_words)
        if rng.random() < 0.5:
            summary = rng.choice(["{", " {", ""]) + summary + rng.choice(["}", "} ", "", "}}"])
        references = [
            "{" + " ".join(rng.choice(ARTICLE_WORDS) for _ in range(rng.randint(1, 10))) + "}" for _ in range(rng.randint(1, 2))
        ]
        cases.append({"article": text, "completion": summary, "references": references})
    return cases


BIAS_WORDS = ["he", "she", "him", "her", "his", "hers", "man", "woman", "men", "women", "boy", "girl", "son", "daughter"]
BIAS_WORDS += ["father", "mother", "brother", "sister", "uncle", "aunt", "male", "female", "Juan", "Maria", "Wei", "Mei"]
BIAS_WORDS += ["James", "Mary", "John", "Patricia", "Carlos", "Chen", "Lee", "Smith", "Garcia", "Nguyen", "Kim", "Li"]
BIAS_WORDS += ["doctor", "nurse", "engineer", "teacher", "secretary", "mechanic", "lawyer", "chef", "pilot", "clerk"]
BIAS_WORDS += ["smart", "emotional", "lazy", "strong", "bossy", "rich", "poor", "arrogant", "caring", "violent"]
BIAS_WORDS += ["the", "was", "a", "and", ".", ",", "He's", "SHE", "Doctor", "her.", '"she"', "nurse's"]


def _bias_cases(rng: random.Random) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = [
        {"texts": []},
        {"texts": [""]},
        {"texts": ["The weather was fine."]},
        {"texts": ["He is a doctor.", "She is a nurse."]},
        {"texts": ['She said, "he is a doctor." Her son was an engineer.']},
    ]
    for _ in range(60):
        texts = [" ".join(rng.choice(BIAS_WORDS) for _ in range(rng.randint(0, 20))) for _ in range(rng.randint(1, 8))]
        cases.append({"texts": texts})
    return cases


def _bbq_cases(rng: random.Random) -> list[dict[str, Any]]:
    """Each: a list of answered instances; option letters A-C, "D" answers none of them."""
    cases = []
    for index in range(80):
        instances = []
        for _ in range(rng.randint(1, 25)):
            letters = ["A", "B", "C"]
            rng.shuffle(letters)
            target, non_target, unknown = letters
            if rng.random() < 0.15:
                non_target = ""  # two target answers: HELM writes an empty non-target tag
            correct = rng.choice([target, unknown] + ([non_target] if non_target else []))
            instances.append(
                {
                    "ambiguous": rng.random() < (0.5 if index % 5 else 1.0),
                    "negative": rng.random() < 0.5,
                    "correct": correct,
                    "target": target,
                    "non_target": non_target,
                    "unknown": unknown,
                    "answer": rng.choice(["A", "B", "C", "A", "B", "C", "D"]),
                }
            )
        cases.append({"instances": instances})
    return cases


def _calibration_cases(rng: random.Random) -> list[dict[str, Any]]:
    cases = []
    for _ in range(60):
        n = rng.randint(2, 120)
        # distinct confidences: HELM's argsort order among ties is the one thing left to numpy's sort
        confidences = [value / 100_000 for value in rng.sample(range(1, 100_000), n)]
        skill = rng.random()
        correct = [int(rng.random() < skill * p + (1 - skill) * 0.5) for p in confidences]
        cases.append({"confidences": confidences, "correct": correct})
    cases.append({"confidences": [0.9, 0.8, 0.7], "correct": [1, 1, 1]})
    cases.append({"confidences": [0.9, 0.8, 0.7], "correct": [0, 0, 0]})
    cases.append({"confidences": [0.5], "correct": [1]})
    return cases


def _classification_cases(rng: random.Random) -> list[dict[str, Any]]:
    """Labels already in HELM's normal form (lower case, no punctuation), so only the averaging is compared."""
    cases = []
    for _ in range(40):
        names = rng.choice([["yes", "no"], ["positive", "negative", "neutral"], ["a", "b", "c", "d"]])
        n = rng.randint(1, 30)
        y_true = [rng.choice(names) for _ in range(n)]
        y_pred = [rng.choice([*names, "maybe"]) if rng.random() < 0.5 else truth for truth in y_true]
        cases.append({"y_true": y_true, "y_pred": y_pred})
    return cases


def _win_rate_cases(rng: random.Random) -> list[dict[str, Any]]:
    """Each: rows (models) x columns of values (None: missing) and each column's ``lower_is_better``."""
    cases = [
        {"values": [[1.0], [1.0]], "lower_is_better": [False]},
        {"values": [[1.0], [1.0], [0.5]], "lower_is_better": [False]},
        {"values": [[0.2, 3.0], [0.2, None], [0.1, 1.0]], "lower_is_better": [False, True]},
        {"values": [[None], [0.3]], "lower_is_better": [False]},
        {"values": [[0.3, 1.0], [0.4, 2.0]], "lower_is_better": [None, False]},
        {"values": [[0.0], [-0.0], [0.1]], "lower_is_better": [True]},
    ]
    for _ in range(60):
        rows, columns = rng.randint(1, 7), rng.randint(1, 6)
        pool = [round(rng.random(), 1) for _ in range(4)]  # few distinct values: many ties
        values = [
            [None if rng.random() < 0.15 else rng.choice(pool + [rng.random()]) for _ in range(columns)] for _ in range(rows)
        ]
        lower = [rng.choice([False, False, True, None]) for _ in range(columns)]
        cases.append({"values": values, "lower_is_better": lower})
    return cases


def build(files: Path) -> dict[str, Any]:
    rng = random.Random(SEED)
    return {
        "reference": _reference_cases(rng),
        "copyright": _copyright_cases(rng),
        "summarization": _summarization_cases(rng),
        "bias": _bias_cases(rng),
        "bbq": _bbq_cases(rng),
        "calibration": _calibration_cases(rng),
        "classification": _classification_cases(rng),
        "win_rate": _win_rate_cases(rng),
    }
