"""Inputs of the ``perturbations`` section: word lists in HELM's formats, seeded instances, and HELM's presets.

``build(files)`` writes the three word lists HELM reads at run time into ``files`` (``golden/perturbations/``),
derived from the project's own lists plus adversarial entries, and returns what the oracle runs HELM on:

* ``instances``: ids, inputs and references covering tricky text (ALL CAPS, Title Case, non-ASCII letters,
  apostrophes, tabs and newlines, listed words at the ends of the text, repeated words, empty strings, names
  in the references only) and a few with contrast sets;
* ``presets``: for every HELM preset the project offers, HELM's class and constructor arguments as
  ``run_expander`` builds them, a ``@name`` argument standing for a file of ``files``;
* ``seeds``: HELM's ``Processor`` seeds (None, then 1 and 2);
* ``crashes``: instances on which HELM raises (a case-insensitive match whose lower case is no key, a
  misspelling key that is a pattern); the project keeps the word there instead;
* ``scripted``: texts and fixed draws for fmeval's three per-character rules (its numpy stream aside).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from pytest_holistic.perturbations import catalog
from pytest_holistic.perturbations._tables import rows

SEEDS = (None, 1, 2)
NOT_HELM = frozenset({"synonym", "butter_finger", "random_upper_case", "whitespace_add_remove"})
"""Presets with no oracle here: synonym needs spaCy and HELM's downloaded WordNet synonyms; fmeval's three are
checked per character (``scripted``)."""

_AUG = "helm.benchmark.augmentations."
DIALECT_FILE, NAMES_FILE, MISSPELLINGS_FILE = "SAE_to_AAVE_mapping.json", "person_names.txt", "correct_to_misspelling.json"


def _spec(cls: str, **args: Any) -> dict[str, Any]:
    return {"class": _AUG + cls, "args": args}


def _dialect(prob: float) -> dict[str, Any]:
    return _spec(
        "dialect_perturbation.DialectPerturbation",
        prob=prob,
        source_class="SAE",
        target_class="AAVE",
        mapping_file_path=f"@{DIALECT_FILE}",
    )


def _gender(mode: str, prob: float) -> dict[str, Any]:
    return _spec(
        "gender_perturbation.GenderPerturbation",
        mode=mode,
        prob=prob,
        source_class="male",
        target_class="female",
        mapping_file_path=None,
        mapping_file_genders=None,
        bidirectional=False,
    )


def _names(prob: float, name_type: str, source: str, target: str, preserve_gender: bool) -> dict[str, Any]:
    return _spec(
        "person_name_perturbation.PersonNamePerturbation",
        prob=prob,
        source_class={"race": source},
        target_class={"race": target},
        name_file_path=f"@{NAMES_FILE}",
        person_name_type=name_type,
        preserve_gender=preserve_gender,
    )


_LEVELS = {"": 1.0, "_easy": 0.1, "_medium": 0.3, "_hard": 0.5}
PRESETS: dict[str, dict[str, Any]] = {
    "mild_mix": _spec("mild_mix_perturbation.MildMixPerturbation"),
    "lowercase": _spec("lowercase_perturbation.LowerCasePerturbation"),
    "contraction": _spec("contraction_expansion_perturbation.ContractionPerturbation"),
    "expansion": _spec("contraction_expansion_perturbation.ExpansionPerturbation"),
    **{
        name: _spec("misspelling_perturbation.MisspellingPerturbation", prob=prob)
        for name, prob in (
            ("misspellings", 0.1),
            ("misspellings_mild", 0.05),
            ("misspellings_medium", 0.2),
            ("misspellings_hard", 0.5),
        )
    },
    **{
        name: _spec("typos_perturbation.TyposPerturbation", prob=prob)
        for name, prob in (("typos", 0.1), ("typos_easy", 0.1), ("typos_medium", 0.3), ("typos_hard", 0.5))
    },
    "space": _spec("space_perturbation.SpacePerturbation", max_spaces=3),
    "extra_space": _spec("extra_space_perturbation.ExtraSpacePerturbation", num_spaces=2),
    "filler_words": _spec("filler_words_perturbation.FillerWordsPerturbation", insert_prob=0.3, speaker_ph=False),
    **{f"dialect{suffix}": _dialect(prob) for suffix, prob in _LEVELS.items()},
    **{f"gender_{mode}{suffix}": _gender(mode, prob) for mode in ("pronouns", "terms") for suffix, prob in _LEVELS.items()},
    "person_name": _names(1.0, "first_name", "white_american", "black_american", True),
    "person_name_hard": _names(0.5, "first_name", "white_american", "black_american", True),
    "person_name_hard_any_gender": _names(0.5, "first_name", "white_american", "black_american", False),
    "person_name_last": _names(1.0, "last_name", "white", "hispanic", False),
    "person_name_last_hard": _names(0.5, "last_name", "white", "hispanic", False),
    "contrast_sets": _spec("contrast_sets_perturbation.ContrastSetsPerturbation"),
}
"""Project preset -> HELM's class and constructor arguments (HELM 0.5.16 ``run_expander`` presets; the oracle
checks each against ``PERTURBATION_SPECS_DICT``)."""


def _instance(id: str, text: str, *references: str | tuple[str, bool], contrasts: tuple[Any, ...] = ()) -> dict[str, Any]:
    refs = [{"text": r, "correct": True} if isinstance(r, str) else {"text": r[0], "correct": r[1]} for r in references]
    out: dict[str, Any] = {"id": id, "input": text, "references": refs}
    if contrasts:
        out["contrasts"] = [
            {"input": contrast_input, "references": [{"text": t, "correct": c} for t, c in contrast_refs]}
            for contrast_input, contrast_refs in contrasts
        ]
    return out


INSTANCES: tuple[dict[str, Any], ...] = (
    _instance("fox", "The quick brown fox jumps over the lazy dog.", "the lazy dog", ("a cat", False)),
    _instance(
        "caps",
        "HE SAID HIS BROTHER IS NOT AT HOME, AND WE WILL SEE WHAT THEY ARE DOING WITH THEIR FATHER.",
        "NO",
        ("HE IS NOT", False),
    ),
    _instance("title", "Where Did John And His Sister Go With Their Father Yesterday?", "To The Store With Their Father"),
    _instance(
        "non-ascii",
        "The Kelvin\u212a scale: caf\u00e9, na\u00efve fa\u00e7ade, \u0130stanbul, \u01c5emal and Stra\u00dfe; I as\u212a "
        "\u00c9mile about his \u00e9t\u00e9 with \u00c5sa.",
        "K\u212a",
        "\u01c5emal",
    ),
    _instance(
        "apostrophes",
        "It's what he'd've said: I'm sure they're not; she's isn't about a lot of things, and we'll see. "
        "About a week ago, HE'S gone and you'd've known. Where've y'all been, ma'am?",
        "It's",
        "he'd've",
    ),
    _instance(
        "whitespace",
        "He is\there.\nShe is not\tthere. They are\nwith his friend\tand her mother.\r\nI am\u00a0here and he is\u2003too.",
        "He is\there",
    ),
    _instance("ends", "this is what I have to tell, with that", "that", "this"),
    _instance("repeated", "he he he said the the the with with with their their his his", "he he"),
    _instance("empty", "", "", "something"),
    _instance("spaces", "  lead and  trail  with   their   father    ", " with "),
    _instance("only-spaces", "   ", " "),
    _instance("newlines", "\n\nhe is with his brother\n\nthey are\n", "\nhe\n"),
    _instance("one-he", "he", "he"),
    _instance("one-with", "With", "with"),
    _instance("one-name", "Adam", "Adam"),
    _instance(
        "names",
        "Adam told Amanda that Adam and Jamal would meet Emily at noon; ADAM agreed, adam's sister Heather did not.",
        "Adam",
        "Amanda and Adam",
        ("Emily", False),
    ),
    _instance("names-in-references", "Who won the race?", "Adam won", "Amanda", ("Not Adam, but Greg", False)),
    _instance(
        "names-hyphen",
        "Bobbie-Sue and Sue-Ellen met well-known people; ADAM-and-Amanda came with Courtney_Heather.",
        "Bobbie-Sue",
    ),
    _instance(
        "names-adversarial",
        "Taylor, Jordan and Alex met Taylor again; alex stayed with Smith and Odd. Spaced came too, and Alex left.",
        "Alex",
        "Taylor and Jordan",
    ),
    _instance(
        "names-many",
        "Chip, Harry, Josh, Roger, Alan, Frank, Ian, Justin, Ryan, Andrew, Fred, Jack, Matthew and Stephen met "
        "Courtney, Melanie, Sara, Amber, Crystal, Katie, Meredith, Shannon, Betsy, Donna and Kristin.",
        "Chip and Courtney",
    ),
    _instance(
        "last-names",
        "Mr. Smith met Ms. Johnson and the Garcia family; SMITH laughed at Taylor's joke, and Wilson, Martin and Harris left.",
        "Smith",
        "Johnson and Taylor",
    ),
    _instance(
        "misspellings",
        "Their definitely believe the beginning is about the receive, About the end, and a lot more. About a week "
        "isn't enough; The Monday address is well-known, the government said, because Their accommodation was separate.",
        "about a week",
    ),
    _instance(
        "contractions",
        "I would not say that it is not true. I WOULD NOT. We will go; you are late and they have left. It cannot have "
        "been. WE WILL see. i am here, I am there, She Is Not, what is that, there is a cat",
        "It is not",
    ),
    _instance(
        "expansions",
        "He'd've won't can't I'M Don't ma'am How'd'y it's IT'S It's who'll HE'S she'D where'd you'd've can't've",
        "won't",
        "I'M",
    ),
    _instance(
        "gender",
        "The king's son met a waiter; his father and grandmothers, Mom and Dad, HIMSELF, Himself and himself. "
        "He gave him his book and he said it was his. The boys and men, the kings, the sons.",
        "his father",
        ("The king", False),
        "He is his own man",
    ),
    _instance(
        "dialect",
        "They were going to the store with their brother, and nothing was better than something; I told them "
        "that these things are probably because of the weather. Before that, another mother asked about it, "
        "and he was looking for his sister. This is going to be it, going to work with it.",
        "with their brother",
        ("nothing", False),
    ),
    _instance(
        "dialect-caps",
        "THEY WERE GOING TO THE STORE WITH THEIR BROTHER. Nothing Is Better Than Something. ThEy WiTh tHeIr.",
        "THE STORE",
    ),
    _instance(
        "separators",
        "he-he he/he he,he he.he (he) [his] 'him' \"with\" with-it with_it with\u00a0it with\u2014their",
        "he/he",
    ),
    _instance(
        "paragraph",
        "Adam said that he is not going to the store because his brother, Amanda's friend, is looking after their "
        "father. They will come back later; I'm sure it's fine. Emily asked Greg about the definitely separate "
        "accommodation, and Greg told her that there is nothing to worry about.",
        "Adam and Greg",
        ("Emily", False),
    ),
    _instance("digits", "In 1999 he was 42, with 3 brothers; 2 + 2 = 4.", "42"),
    _instance("punctuation", "!!! ??? ... --- ;;; ,,, ''' \"\"\"", "..."),
    _instance(
        "contrast",
        "Is the sky blue on a clear day?",
        "yes",
        ("no", False),
        contrasts=(
            ("Is the sky green on a clear day?", (("no", True), ("yes", False))),
            ("Is the grass green in spring?", (("yes", True), ("no", False))),
            ("Is the sky blue at night?", (("no", True), ("yes", False))),
        ),
    ),
    _instance(
        "contrast-same-input",
        "Does the film end well?",
        "yes",
        contrasts=(("Does the film end well?", (("no", True),)),),
    ),
    _instance("contrast-one", "Was it good?", "yes", contrasts=(("Was it bad?", (("yes", True),)),)),
)

CRASHES: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("contraction", _instance("crash-long-s-contract", "ſhe is here and it is late", "x"), "ſhe is "),
    ("expansion", _instance("crash-long-s-expand", "ſhe's here and it's late", "x"), "ſhe's"),
    ("expansion", _instance("crash-dotted-i-expand", "\u0130'm here and it's late", "x"), "\u0130'm"),
    ("dialect", _instance("crash-dialect-case", "we are OK with them there now", "x"), "OK"),
    ("dialect", _instance("crash-dialect-fold", "he did it himſelf with them there now", "x"), "himſelf"),
    ("misspellings_hard", _instance("crash-misspelling-pattern", "ZZ Top and zzztop played the", "x"), "zzztop"),
)
"""(preset, instance, the text the project keeps where HELM raises): case-insensitive matches whose lower case is no
key, and a misspelling key that is a pattern. HELM does not always raise: an unknown contraction whose case rule
keeps the target as written is deleted (its substitute is None); the golden records which."""


# -- word lists in HELM's formats ---------------------------------------------------------------------

DIALECT_EXTRA_FIRST = {
    "with it": ["wit it"],  # a key holding a space, before "with": the earlier alternative wins
    "going to": ["gon", "finna"],
    "This": ["Dis"],  # a case variant before "this": matches any case, its own alternatives never used
    "well-known": ["well-knowed"],  # a hyphen inside a key
    "OK": ["aight"],  # capitals only: a match's lower case is no key (HELM raises; crash probe only)
}
DIALECT_EXTRA_LAST = {
    "is": ["be"],  # one alternative: still drawn
    "about it": ["bout it"],  # after "about": never reached where "about" matches first
    "he": ["he"],  # a word mapped to itself
}

NAMES_EXTRA = (
    "taylor,first_name,race,white_american,gender,female",
    "taylor,first_name,race,white_american,gender,male",  # in both genders: HELM looks up female first
    "jordan,first_name,race,white_american",  # no gender: any target name
    "alex,first_name,race,white_american,gender,neutral",  # no neutral target: drawn again at each occurrence
    "Jamel,first_name,race,black_american,gender,male",  # a repeated target: twice the weight
    "kiara,first_name,race,black_american",  # a target without a gender
    " Spaced ,first_name,race,white_american,gender,male",  # spaces around the name are stripped
    "smith,first_name,race,white_american,gender,male",  # also a last name; only first names are read here
    "odd,first_name,race,white_american,gender",  # a category without a value: ignored
    "bobbie-sue,first_name,race,black_american,gender,female",  # a hyphenated target: capitalised as one word
)

MISSPELLINGS_EXTRA_FIRST = {
    "about a": ["abotu a"],  # a key with a space, before "about": wins where both match
    "About a": ["Abotu a"],
    "isn't": ["isnt", "isn;t"],  # a key with an apostrophe
    "The": ["Teh"],  # case variants are separate keys
    "the": ["teh", "hte"],
    "Their": ["Thier"],
    "Monday": ["Monady"],  # only the capitalised spelling is listed: "monday" never matches
    "well-known": ["well-knwon"],
    "zz+top": ["zztop"],  # regex syntax: matches "zzztop", which is no key (HELM raises; crash probe only)
}
MISSPELLINGS_EXTRA_LAST = {
    "a lot": ["alot"],
    "lot": ["lott"],
    "about": ["abuot", "abotu"],
    "about the": ["abotu the"],  # after "about": never reached
}


def _texts() -> list[str]:
    texts = []
    for instance in INSTANCES:
        texts.append(instance["input"])
        texts.extend(ref["text"] for ref in instance["references"])
    return texts


def _write_dialect(path: Path) -> None:
    table: dict[str, list[str]] = dict(DIALECT_EXTRA_FIRST)
    for word, *alternatives in rows("sae_to_aae.tsv"):
        table.setdefault(word, alternatives)
    for word, alternatives in DIALECT_EXTRA_LAST.items():
        table.setdefault(word, alternatives)
    path.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _write_names(path: Path) -> None:
    lines = [
        f"{name},{kind},race,{race}" + (f",gender,{sex}" if sex != "-" else "")
        for name, kind, race, sex in rows("person_names.tsv")
    ]
    path.write_text("\n".join([*lines, *NAMES_EXTRA]) + "\n", encoding="utf-8")


def _write_misspellings(path: Path) -> None:
    """The adversarial keys, then the project's entries for every word the texts hold (in any case), then the rest."""
    words = {word for text in _texts() for word in re.findall(r"\w+", text)}
    words |= {word.lower() for word in words}
    table: dict[str, list[str]] = dict(MISSPELLINGS_EXTRA_FIRST)
    project = {correct: wrong for correct, *wrong in rows("misspellings.tsv")}
    for word in sorted(words & project.keys()):
        table.setdefault(word, project[word])
    for word, wrong in MISSPELLINGS_EXTRA_LAST.items():
        table.setdefault(word, wrong)
    path.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# -- fmeval's per-character rules with fixed draws ----------------------------------------------------

SCRIPTED_TEXTS = (
    "A quick brown fox jumps over the lazy dog 10 times.",
    "Kelvin\u212a \u01c5emal \u0130stanbul Stra\u00dfe \u00c9MILE caf\u00e9",
    "  tabs\tand\nnewlines  \u00a0 ",
    "",
    "ABC abc",
)
FMEVAL: dict[str, dict[str, Any]] = {
    "butter_finger": {"class": "ButterFinger", "args": {"perturbation_prob": 0.5}},
    "random_upper_case": {"class": "RandomUppercase", "args": {"uppercase_fraction": 0.3}},
    "whitespace_add_remove": {"class": "AddRemoveWhitespace", "args": {"add_prob": 0.3, "remove_prob": 0.5}},
}
"""fmeval transform and arguments per project preset, with rates raised so that every branch is taken."""


def _scripted() -> list[dict[str, Any]]:
    stream = random.Random(20240603)
    cases = []
    for preset, spec in FMEVAL.items():
        for index, text in enumerate(SCRIPTED_TEXTS):
            draws = [stream.random() for _ in range(3 * len(text) + 4)]
            cases.append({"preset": preset, "text_index": index, "text": text, "draws": draws, **spec})
    return cases


def build(files: Path) -> dict[str, Any]:
    missing = set(catalog.PERTURBATIONS) - NOT_HELM - set(PRESETS)
    if missing:
        raise SystemExit(f"inputs/perturbations.py: give HELM's class and arguments for {', '.join(sorted(missing))}")
    _write_dialect(files / DIALECT_FILE)
    _write_names(files / NAMES_FILE)
    _write_misspellings(files / MISSPELLINGS_FILE)
    return {
        "instances": list(INSTANCES),
        "presets": PRESETS,
        "seeds": list(SEEDS),
        "crashes": [{"preset": preset, "instance": instance, "kept": kept} for preset, instance, kept in CRASHES],
        "scripted": _scripted(),
    }
