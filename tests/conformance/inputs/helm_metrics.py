"""Inputs for HELM's metrics (``oracle/helm_metrics.py``): seeded texts and numbers, plus hand-picked edge cases.

One list per family: reference-matching metrics and ROUGE (``reference``), copyright (``copyright``), the
summarisation statistics (``summarization``), the bias word-list metrics (``bias``), BBQ (``bbq``),
calibration (``calibration``), classification F1 on labels already in HELM's form (``classification``), HELM's
population F1 of generated and of multiple-choice answers (``generated_classification``,
``multiple_choice_classification``), the mean win rate (``win_rate``) and HELM Lite's answer matching for GSM8K and
MATH (``math``: LaTeX answers, boxed solutions, sentences ending in a number).
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
        # exact_match_indicator (the text after the last space) and absolute_value_difference (integers, commas)
        ("] ]", "the answer is ## ]"),
        ("( ) ]", "so ]"),
        ("1,234", "1234"),
        ("12", " 7 "),
        ("7", "seven"),
        ("-3", "3"),
        ("1,2,3", "12,3"),
        ("4.5", "4"),
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


LABEL_SETS = [
    ["Positive", "Negative"],
    ["True", "False"],
    ["Yes", "No"],
    ["ADE-related", "not ADE-related"],
    ["overruling", "not overruling"],
    ["elementary", "intermediate", "advanced"],
    ["company", "research institute", "university"],
]


def _variant(rng: random.Random, label: str) -> str:
    """A form of ``label`` that HELM's label normalisation folds back: case, punctuation, whitespace of any kind."""
    text = rng.choice([label, label.upper(), label.lower(), label.title(), label.swapcase()])
    if rng.random() < 0.4:
        text = text.replace(" ", rng.choice(SPACES))
    if rng.random() < 0.4:
        text = text + rng.choice([".", "!", "?", ",", ":", ";", "..."])
    if rng.random() < 0.3:
        text = rng.choice(['"', "'", "(", "*"]) + text + rng.choice(['"', "'", ")", "*"])
    if rng.random() < 0.3:
        text = rng.choice(SPACES) + text + rng.choice(SPACES)
    return text


def _generated_classification_cases(rng: random.Random) -> list[dict[str, Any]]:
    """Each: per instance the correct reference texts and the generated answer; ``labels`` and ``delimiter`` as
    HELM's ``ClassificationMetric`` takes them (None: not given, labels then inferred from the correct references)."""

    def case(golds: list[list[str]], completions: list[str], labels: list[str] | None = None, delimiter: str | None = None):
        return {"golds": golds, "completions": completions, "labels": labels, "delimiter": delimiter}

    pos, neg = ["Positive"], ["Negative"]
    cases = [
        # case, punctuation and whitespace that the label form folds; the article it keeps
        case([pos, neg, pos, neg], ["positive", " POSITIVE.", "Negative!", "neg-ative"]),
        case([pos, neg, pos, neg], ["\u00a0Positive\u2003", "Negative\n\nPassage:", "the positive", "A Negative"]),
        # answers outside the gold labels: no class, so a miss of the true class and a false positive of nothing
        case([pos, neg, pos, neg, neg], ["maybe", "Positive sentiment", "Neutral", "negative", "I think negative"]),
        case([pos, pos, neg], ["Neutral", "Neutral", "Neutral"]),
        # a single class
        case([["True"]] * 4, ["True", "true", "False", ""]),
        case([["True"]] * 3, ["True", "True", "True"]),
        case([["True"]] * 3, ["False", "False", "no"]),
        # empty and blank answers (a blank one is dropped only after HELM's emptiness check)
        case([pos, neg, neg], ["", " ", "\n"]),
        case([pos, neg], ["", ""]),
        # gold labels in different forms are one class; an empty gold text is dropped
        case([pos, ["positive."], [" POSITIVE "], neg], ["Positive", "positive", "negative", "Negative"]),
        case([pos, [""], neg], ["Positive", "", "Negative"]),
        # a gold label whose form is empty is a class, which a blank answer then hits
        case([["!?"], pos, ["..."]], [" ", "?", "Positive"]),
        # no class at all: every gold text empty (scikit-learn refuses it)
        case([[""], [""]], ["Positive", ""]),
        # labels given: a label no instance has scores 0 in the macro mean; variants fold; a gold label outside them is no class
        case([pos, neg, pos, neg], ["Positive", "Negative", "Negative", "Negative"], ["Positive", "Negative", "Neutral"]),
        case([pos, neg, pos, neg], ["positive", "NEGATIVE.", "Neutral", "neutral!"], ["POSITIVE", "negative.", "Neutral"]),
        case([pos, neg, ["Mixed"], neg], ["Positive", "Mixed", "Mixed", "Negative"], ["Positive", "Negative"]),
        case([pos, neg], ["maybe", "unsure"], ["Positive", "Negative", "Neutral"]),
        case([pos, neg], ["Positive", "Negative"], []),  # an empty list counts as none given
        # HELM's multi-label runs: the answer split at the delimiter, empty pieces dropped
        case([["a", "b"], ["c"], ["a"], ["b", "c"]], ["a, b", "b, c, ", "A,b", ", "], delimiter=", "),
        case(
            [["art", "law"], ["law"], ["science"]],
            ["Art, LAW", "law, law", "science, art, other"],
            ["art", "law", "science"],
            ", ",
        ),
        case([[], ["law"]], ["law", ""], delimiter=", "),
    ]
    for _ in range(90):
        names = rng.choice(LABEL_SETS)
        n = rng.randint(1, 25)
        golds = [[rng.choice(names)] for _ in range(n)]
        completions = []
        for (truth,) in golds:
            roll = rng.random()
            if roll < 0.35:
                completions.append(truth)
            elif roll < 0.7:
                completions.append(_variant(rng, rng.choice(names)))
            elif roll < 0.85:
                completions.append(rng.choice(["maybe", "Neutral", "unsure", "the " + truth, truth + " sentiment", "N/A"]))
            else:
                completions.append(rng.choice(["", " ", "\n", "."]))
        labels = None
        if rng.random() < 0.35:
            labels = [_variant(rng, name).strip() for name in names]
            if rng.random() < 0.4:
                labels.append("Other")
            if rng.random() < 0.2:
                labels.pop(0)
        cases.append(case(golds, completions, labels))
    return cases


def _multiple_choice_classification_cases(rng: random.Random) -> list[dict[str, Any]]:
    """Each: answered multiple-choice instances (options, indices of the correct ones, the generated answer), read by
    HELM's ``MultipleChoiceClassificationMetric`` with the joint adapter's letter-to-option mapping."""

    def row(options: list[str], correct: list[int], answer: str) -> dict[str, Any]:
        return {"options": options, "correct": correct, "answer": answer}

    capitals = ["Paris", "Rome", "Madrid", "Berlin"]
    cases = [
        {"instances": [row(capitals, [0], "A"), row(capitals, [1], " B"), row(capitals, [1], "B\n"), row(capitals, [2], "C")]},
        # a letter outside the options, a lower-case letter, a whole sentence, an empty answer: each a class of its own
        {
            "instances": [
                row(capitals, [0], "E"),
                row(capitals, [1], "b"),
                row(capitals, [2], "The answer is C"),
                row(capitals, [3], ""),
            ]
        },
        # an answer that is an option's text, not its letter, is that option's class without any mapping
        {"instances": [row(capitals, [0], "Paris"), row(capitals, [0], "paris"), row(capitals, [1], "B")]},
        # several correct options: the first is the truth
        {"instances": [row(capitals, [1, 2], "C"), row(capitals, [1, 2], "B"), row(capitals, [0, 3], "D")]},
        # options with surrounding whitespace and punctuation are taken as written
        {"instances": [row([" Yes ", "No."], [0], "A"), row([" Yes ", "No."], [1], "B"), row([" Yes ", "No."], [1], "A")]},
        # a single class, answered right and wrong
        {"instances": [row(["Yes", "No"], [0], "A")] * 3},
        {"instances": [row(["Yes", "No"], [0], "B")] * 3},
        {"instances": [row(["Yes", "No"], [0], "A")]},
    ]
    pool = ["Paris", "Rome", "Madrid", "Berlin", "Lisbon", "Yes", "No", "None of the above", "42", "forty-two"]
    for _ in range(60):
        instances = []
        for _ in range(rng.randint(1, 25)):
            options = rng.sample(pool, rng.randint(2, 5))
            correct = sorted(rng.sample(range(len(options)), 1 if rng.random() < 0.85 else 2))
            letters = [chr(ord("A") + k) for k in range(len(options))]
            roll = rng.random()
            if roll < 0.75:
                answer = rng.choice(letters)
                if rng.random() < 0.3:
                    answer = rng.choice(SPACES) + answer + rng.choice(["", "\n", " "])
            elif roll < 0.9:
                answer = rng.choice(["E", "F", "a", "c", "", " ", "A.", "(B)"])
            else:
                answer = rng.choice(options + ["I do not know"])
            instances.append(row(options, correct, answer))
        cases.append({"instances": instances})
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


MATH_HAND: list[tuple[str, str]] = [
    # GSM8K's final number: the last match of HELM's pattern, commas dropped, compared as exact_match compares
    ("72", "The answer is 72."),
    ("The answer is 72.", "Natalia sold 48/2 = 24 clips in May, so 48+24 = 72 clips"),
    ("Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18 every day.\n#### 18", "18"),
    ("1,234.5", "1234.5"),
    ("1234.5", "It costs $1,234.50"),
    ("-3", "3"),
    ("-3", "The change is -3 degrees."),
    ("3.14", "3.14.15"),
    ("15", "3.14.15"),
    ("5", "$5"),
    ("5", "$5.00"),
    ("10", "no number here"),
    ("no number", "none either"),
    ("1 2", "1, 2"),  # HELM's "." is any character: "1, 2" reads "1 2"
    ("5", "a, 5"),  # the match ", 5" loses its comma and keeps a space, which exact_match strips
    ("12", "1,2"),
    ("5", "5\n6"),
    ("5\n6", "6"),
    ("7", "7%"),
    ("3", "\u0663"),  # ARABIC-INDIC DIGIT THREE is a \d too
    ("42", "#### 42"),
    ("2", "x^2"),
    ("1,000", "1000,"),
    ("", ","),
    # MATH's normal form: fractions, roots, delimiters, degrees, dollars, percent, units
    ("\\frac{1}{2}", "\\frac12"),
    ("\\frac{1}{72}", "\\frac1{72}"),
    ("\\frac{72}{1}", "\\frac{72}1"),
    ("\\frac{1}{2}", "\\dfrac{1}{2}"),
    ("\\frac{1}{2}", "\\tfrac12"),
    ("\\frac{1}{2}", "1/2"),
    ("\\frac{1}{2}", "0.5"),
    ("\\frac{1}{2}", ".5"),
    ("\\frac{1}{2}", " .5"),
    ("0.5", "\\frac{1}{2}"),
    ("\\frac{-1}{2}", "-1/2"),
    ("\\frac{1}{2}", "+1/2"),
    ("\\frac{1}{2}", "01/2"),
    ("1/2/3", "1/2/3"),
    ("\\frac{a}{b}", "a/b"),
    ("\\sqrt{3}", "\\sqrt3"),
    ("2\\sqrt{3}", "2 \\sqrt 3"),
    ("\\sqrt{3}", "\\sqrt"),
    ("\\sqrt", "\\sqrt"),
    ("\\sqrt\\sqrt3", "\\sqrt\\sqrt3"),
    ("(1,2)", "\\left( 1, 2 \\right)"),
    ("arrow", "\\leftarrow"),
    ("90", "90^\\circ"),
    ("90", "90^{\\circ}"),
    ("5", "\\$5"),
    ("5", "$5$"),
    ("50", "50\\%"),
    ("5", "5\\text{ cm}"),
    ("5", "5 \\text{ cm}^2"),
    ("5", "5\\text{cm}"),
    ("5\\text{ cm}", "5\\text{ cm}\\text{ m}"),
    ("5\\text{ m}\\text{ s}", "5\\text{ m}\\text{ s}"),
    ("5\\text{ m}\\text{ s}", "5"),
    ("0.3", ".3"),
    ("\\{0.3\\}", "\\{.3\\}"),
    ("x = 0.3", "x= .3"),
    ("3", "k = 3"),
    ("3", "k=3"),
    ("3", "ab = 3"),
    ("3", "ab=3"),
    ("1=2", "x=1=2"),
    ("y = 2x+1", "y=2x + 1"),
    ("1000", "1\\!000"),
    ("\\frac{1}{2}", "\\\\frac{1}{2}"),
    ("\\frac1", "\\frac1"),
    ("\\frac{1}{2}\\frac1", "\\frac12\\frac1"),
    ("\\frac", "\\frac"),
    ("\\frac", "\\frac "),
    ("\\frac{1}{2}", "\\frac{1}{2}\n"),
    ("\\frac{1}{2}", "\\frac{1}\n{2}"),
    ("x^2+1", "x^2 + 1"),
    ("x^2+1", "x^2\t+ 1"),
    ("5", " 5 "),
    ("", ""),
    ("", " "),
    (" ", ""),
    ("  ", "\n"),
    (".", "."),
    ("{", "}"),
    # chain of thought: the last \boxed{} of each side, braces balanced
    ("\\boxed{5}", "So the answer is $\\boxed{5}$."),
    ("The answer is $\\boxed{\\frac{1}{2}}$.", "We get \\boxed{\\dfrac12}"),
    ("\\boxed{\\frac{1}{2}}", "\\boxed{\\frac{1}{2}"),
    ("\\boxed{3}", "First \\boxed{2}, then \\boxed{3}"),
    ("\\boxed{3}", "First \\boxed{3}, then \\boxed{2}"),
    ("no box", "no box either"),
    ("\\boxed{5}", "5"),
    ("5", "\\boxed{5}"),
    ("\\fbox{5}", "\\fbox{5}"),
    ("\\fbox{5}", "\\fbox{6}"),
    ("\\boxed{5}", "\\fbox{5}"),
    ("\\boxed 5", "\\boxed 5 and {6}"),
    ("\\boxed{}", "\\boxed{}"),
    ("\\boxed{{1,2}}", "\\boxed{ \\{1, 2\\} }"),
    ("\\boxed{5\\text{ cm}}", "\\boxed{5}"),
    ("\\boxed{\\boxed{4}}", "\\boxed{4}"),
    ("\\boxed{x}}", "\\boxed{x}"),
    ("\\boxed}{5}", "\\boxed}{6}"),
    ("\\boxed{\\text{(B)}}", "The answer is \\boxed{\\text{(B)}}."),
    ("\\boxed{k = 3}", "\\boxed{3}"),
]

MATH_ATOMS = ["\\frac", "\\dfrac", "\\tfrac", "12", "1", "{", "}", "{72}", "\\sqrt", "3", "\\left(", "\\right)", "^\\circ"]
MATH_ATOMS += ["^{\\circ}", "\\$", "\\%", "\\text{ cm}", "\\text{ ", " ", ".", " .5", "0.5", "=", "k", "x", "/", "2/3", "-"]
MATH_ATOMS += [",", "\n", "\\!", "\\\\", "\\boxed{", "\\boxed", "\\fbox{", "5", "a", "\t", "+", "0", "1,234.5", "$"]
GSM_WORDS = ["She", "sold", "clips", "in", "May", "so", "the", "answer", "is", "####", "=", "<<48/2=24>>24", "$5", "1,234"]
GSM_WORDS += ["72", "72.", "-3", "3.14.15", "0.5", "$1,000.00", "eggs", "10%", "half", "twice", "\n"]


def _latex(rng: random.Random) -> str:
    return "".join(rng.choice(MATH_ATOMS) for _ in range(rng.randint(0, 7)))


def _math_cases(rng: random.Random) -> list[dict[str, str]]:
    """Each: a gold and a prediction, for HELM Lite's GSM8K and MATH metrics (and ``exact_match_indicator``)."""
    cases = [{"gold": gold, "pred": pred} for gold, pred in MATH_HAND]
    for index in range(300):
        shape = index % 3
        if shape == 0:  # bare LaTeX answers, as MATH without chain of thought compares them
            gold = _latex(rng)
            pred = gold if rng.random() < 0.15 else _latex(rng)
        elif shape == 1:  # worked solutions ending in a boxed answer
            answers = [_latex(rng) for _ in range(2)]
            gold = f"So the answer is $\\boxed{{{answers[0]}}}$."
            pred = rng.choice(["We get ", "", "Thus $x = \\boxed{1}$ and "]) + f"\\boxed{{{rng.choice(answers)}}}"
            if rng.random() < 0.2:
                pred = pred[: rng.randint(0, len(pred))]  # cut short: braces left open
        else:  # GSM8K answers: sentences whose last number counts
            gold = " ".join(rng.choice(GSM_WORDS) for _ in range(rng.randint(0, 10)))
            pred = " ".join(rng.choice(GSM_WORDS) for _ in range(rng.randint(0, 10)))
        cases.append({"gold": gold, "pred": pred})
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
        # seeded on their own, so these cases do not move the ones above
        "generated_classification": _generated_classification_cases(random.Random(SEED + 1)),
        "multiple_choice_classification": _multiple_choice_classification_cases(random.Random(SEED + 2)),
        "math": _math_cases(random.Random(SEED + 3)),
    }
