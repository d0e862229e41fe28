"""HELM's fairness (counterfactual) perturbations: dialect, gender and person names.

Each swaps words that signal a group (a dialect, a gender, a race) for the matching words of another
group, so a model whose answer changes is treated differently by group. All three change the references
too: the gold answer "he" must become "she" when the question's "he" does. The rules, random draws included,
are those of HELM 0.5.16's ``dialect_perturbation.py``, ``gender_perturbation.py`` and
``person_name_perturbation.py``, so the same instance and word lists give HELM's output.

Word lists: ``gender_terms.tsv`` (HELM's published tuples) and, through :mod:`.wordlists`, the dialect map
and person names, the project's own (``sae_to_aae.tsv``, ``person_names.tsv``) or the user's copies of HELM's.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..errors import UserError
from ._case import match_case
from ._tables import rows
from .base import Perturbation, Transform
from .wordlists import PROJECT, WordLists

GENDERS = ("neutral", "female", "male")
"""The gender classes, in the column order of ``gender_terms.tsv``."""
GENDER_MODES = ("pronouns", "terms")
NAME_TYPES = ("first_name", "last_name")
DIALECTS = (("SAE", "AAE"),)
"""(source, target) dialects a word list exists for. HELM spells the target ``AAVE``; both spellings are accepted."""
_DIALECT_ALIASES: Mapping[str, str] = MappingProxyType({"AAVE": "AAE"})
_NAME_TOKENS = re.compile(r"([^\w])")
"""HELM's tokeniser for names: split at every non-word character and keep it, so joining restores the text."""


def check_rate(name: str, value: float) -> None:
    """Reject a probability outside [0, 1] now, with the parameter's name, rather than misbehaving quietly."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise UserError(f"perturbation parameter {name}={value!r} must be a number between 0 and 1")


# -- dialect -----------------------------------------------------------------------------------------


@functools.cache
def _dialect_rule(word_lists: WordLists) -> tuple[Mapping[str, tuple[str, ...]], re.Pattern[str]]:
    """The dialect map and HELM's pattern over it: any listed word (file order) with a character on each side that is
    neither a word character nor a hyphen. So no word at the very start or end of the text matches, and two words
    sharing one separator ("x x") match only the first: the separator is consumed."""
    table = word_lists.dialect_map()
    alternatives = "|".join(re.escape(word) for word in table)
    return table, re.compile(rf"[^\w-]({alternatives})[^\w-]", re.IGNORECASE)


def dialect(
    text: str,
    rng: random.Random,
    *,
    prob: float,
    source_class: str = "SAE",
    target_class: str = "AAE",
    word_lists: WordLists = PROJECT,
) -> str:
    """Standard American English words rewritten as African American English (HELM ``DialectPerturbation``).

    Each match draws ``random() < prob``; a hit draws one of the word's alternatives (even when it has only
    one) and writes it in the word's case, in place of the word within the matched text.
    """
    check_rate("prob", prob)
    pair = tuple(_DIALECT_ALIASES.get(name.upper(), name.upper()) for name in (source_class, target_class))
    if pair not in DIALECTS:
        known = ", ".join(f"{s}->{t}" for s, t in DIALECTS)
        raise UserError(f"no dialect word list from {source_class} to {target_class}; available: {known}")
    table, pattern = _dialect_rule(word_lists)

    def one(match: re.Match[str]) -> str:
        whole, word = match.group(0), match.group(1)
        if not rng.random() < prob:
            return whole
        options = table.get(word.lower())
        # A key with capitals matches case-insensitively but its lower case is no key: HELM raises KeyError
        # there (IndexError for an empty list); the word is kept instead.
        if not options:
            return whole
        return whole.replace(word, match_case(word, rng.choice(options)))

    return pattern.sub(one, text)


# -- gender ------------------------------------------------------------------------------------------


@functools.cache
def _gender_pairs(mode: str, source: str, target: str, bidirectional: bool) -> tuple[tuple[re.Pattern[str], str], ...]:
    """(pattern of a source word, its target word) per tuple in list order, then reversed pairs when bidirectional."""
    if mode not in GENDER_MODES:
        raise UserError(f"gender mode {mode!r} is not one of {', '.join(GENDER_MODES)}")
    for name, value in (("source_class", source), ("target_class", target)):
        if value not in GENDERS:
            raise UserError(f"gender {name} {value!r} is not one of {', '.join(GENDERS)}")
    if source == target:
        raise UserError(f"gender source_class and target_class are both {source!r}; nothing would change")
    tuples = [row[1:] for row in rows("gender_terms.tsv") if row[0] == mode]
    s, t = GENDERS.index(source), GENDERS.index(target)
    pairs = [(words[s], words[t]) for words in tuples]
    if bidirectional:
        pairs += [(words[t], words[s]) for words in tuples]
    return tuple((re.compile(rf"[^\w]({re.escape(word)})[^\w]", re.IGNORECASE), substitute) for word, substitute in pairs)


def gender(
    text: str,
    rng: random.Random,
    *,
    mode: str,
    prob: float,
    source_class: str = "male",
    target_class: str = "female",
    bidirectional: bool = False,
) -> str:
    """Gendered pronouns (``mode="pronouns"``) or terms (``"terms"``) of one gender swapped for another's (HELM ``gender``).

    HELM's rule: one pass per (source word, target word) pair in list order, each matching the word with a
    non-word character on both sides (so never at the very start or end of the text); each match draws
    ``random() < prob`` and a hit writes the target word in the word's case. A word in two tuples ("his" ->
    "her", "his" -> "hers") is caught by the first pass it survives; when bidirectional the reversed pairs
    run after all the forward ones, so they may turn a substitute back ("he" -> "she" -> "he").
    """
    check_rate("prob", prob)
    for pattern, substitute in _gender_pairs(mode, source_class.lower(), target_class.lower(), bidirectional):

        def one(match: re.Match[str], substitute: str = substitute) -> str:
            whole, word = match.group(0), match.group(1)
            return whole.replace(word, match_case(word, substitute)) if rng.random() < prob else whole

        text = pattern.sub(one, text)
    return text


# -- person names ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _NameTable:
    """The names of one type by category value, as HELM's name file gives them: file order, repeats kept."""

    values: Mapping[str, Mapping[str, tuple[str, ...]]]  # category -> value -> names
    file: str

    def names(self, category: str, value: str, parameter: str) -> tuple[str, ...]:
        found = self.values.get(category, {}).get(value)
        if not found:
            known = ", ".join(sorted(self.values.get(category, {}))) or "none"
            raise UserError(f"person_name {parameter} {value!r} has no names in {self.file}; its {category} values: {known}")
        return found

    def gender(self, name: str) -> str | None:
        """HELM's lookup order: female, then male, then neutral; None when the name has no gender."""
        genders = self.values.get("gender", {})
        return next((sex for sex in ("female", "male", "neutral") if name in genders.get(sex, ())), None)


@functools.cache
def _name_table(word_lists: WordLists, name_type: str) -> _NameTable:
    if name_type not in NAME_TYPES:
        raise UserError(f"person name_type {name_type!r} is not one of {', '.join(NAME_TYPES)}")
    values: dict[str, dict[str, list[str]]] = {}
    for entry in word_lists.names():
        if entry.name_type == name_type:
            for category, value in entry.categories:
                values.setdefault(category, {}).setdefault(value, []).append(entry.name)
    frozen = {category: MappingProxyType({v: tuple(n) for v, n in by.items()}) for category, by in values.items()}
    return _NameTable(MappingProxyType(frozen), word_lists.describe(("person_names",))["person_names"]["file"])


def person_name(
    text: str,
    rng: random.Random,
    *,
    memory: dict[str, Any],
    prob: float,
    source_race: str,
    target_race: str,
    name_type: str = "first_name",
    preserve_gender: bool = True,
    word_lists: WordLists = PROJECT,
) -> str:
    """Names of one race replaced by names of another (HELM ``PersonNamePerturbation``), the same way everywhere.

    The text is split at non-word characters. A token whose lower case is a ``source_race`` name and that
    ``memory`` has not decided yet draws ``random() < prob``: a miss keeps it for the whole instance; a hit
    draws a ``target_race`` name (names in file order, repeats kept), of the same gender when
    ``preserve_gender`` and the name has one, and records it. With no target of that gender nothing is
    recorded, so the next occurrence draws again (HELM's rule). Every token with a recorded substitute gets
    it in the token's case. ``memory`` is shared by the references and the input of one instance, so "Adam"
    in the question and in the answer become the same name.
    """
    check_rate("prob", prob)
    table = _name_table(word_lists, name_type.lower())
    sources = frozenset(table.names("race", source_race.lower(), "source_race"))
    targets = table.names("race", target_race.lower(), "target_race")
    if preserve_gender and (name_type.lower() != "first_name" or not table.values.get("gender")):
        raise UserError(f"person_name preserve_gender needs first names with a gender category in {table.file}")
    pieces = []
    for token in _NAME_TOKENS.split(text):
        key = token.lower()
        if key in sources and key not in memory:
            if rng.random() < prob:
                chosen = _substitute(table, key, targets, rng, preserve_gender)
                if chosen is not None:
                    memory[key] = chosen
            else:
                memory[key] = None  # skipped for the whole instance
        if memory.get(key) is not None:
            token = match_case(token, memory[key])
        pieces.append(token)
    return "".join(pieces)


def _substitute(table: _NameTable, key: str, targets: tuple[str, ...], rng: random.Random, preserve_gender: bool) -> str | None:
    """A target name for ``key``: of its gender when asked and known; None when no target has that gender."""
    options = targets
    sex = table.gender(key) if preserve_gender else None
    if sex is not None:
        options = tuple(name for name in targets if name in table.values["gender"][sex])
        if not options:
            return None
    return rng.choice(options)


# -- presets -----------------------------------------------------------------------------------------

_HELM = "Liang et al. 2022 (HELM 0.5.16), stanford-crfm/helm"
_DIALECT_SOURCE = (
    f"HELM DialectPerturbation, {_HELM} dialect_perturbation.py; SAE->AAE word list: see word_lists "
    "(the project's after Green 2002 and Ziems et al. 2022, or HELM's SAE_to_AAVE_mapping.json)"
)
_GENDER_SOURCE = (
    f"HELM GenderPerturbation, {_HELM} gender_perturbation.py; pronouns from Lauscher et al. 2022, terms from Garg et al. 2018 "
    "and Bolukbasi et al. 2016 plus HELM's additions"
)
_NAME_SOURCE = (
    f"HELM PersonNamePerturbation, {_HELM} person_name_perturbation.py; first names from Greenwald et al. 1998 "
    "(via Caliskan et al. 2017), last names from Garg et al. 2018 (see word_lists); substitutions persist across the "
    "references and the input; HELM ignores the seed here"
)
_LEVELS = (("", 1.0), ("_easy", 0.1), ("_medium", 0.3), ("_hard", 0.5))
"""HELM's suffixes: the plain name is its ``_deterministic`` preset (every word changed)."""


def _fairness(
    name: str,
    transform: Transform,
    params: Mapping[str, Any],
    source: str,
    lists: tuple[str, ...] = (),
    person_names: bool = False,
) -> Perturbation:
    return Perturbation(
        name,
        "fairness",
        transform,
        params=MappingProxyType(dict(params)),
        perturbs_references=True,
        stateful=person_names,  # one substitution memory per instance
        source=source,
        lists=lists,
        seeded=not person_names,  # HELM's person names draw from Random(instance.id) whatever the seed
    )


def _person_name(name: str, prob: float, name_type: str, target_race: str, preserve_gender: bool) -> Perturbation:
    source_race = "white_american" if name_type == "first_name" else "white"
    params = {
        "prob": prob,
        "source_race": source_race,
        "target_race": target_race,
        "name_type": name_type,
        "preserve_gender": preserve_gender,
    }
    return _fairness(name, person_name, params, _NAME_SOURCE, ("person_names",), person_names=True)


PRESETS: tuple[Perturbation, ...] = (
    *(
        _fairness(
            f"dialect{suffix}",
            dialect,
            {"prob": prob, "source_class": "SAE", "target_class": "AAE"},
            _DIALECT_SOURCE,
            ("dialect",),
        )
        for suffix, prob in _LEVELS
    ),
    *(
        _fairness(
            f"gender_{mode}{suffix}",
            gender,
            {"mode": mode, "prob": prob, "source_class": "male", "target_class": "female", "bidirectional": False},
            _GENDER_SOURCE,
        )
        for mode in GENDER_MODES
        for suffix, prob in _LEVELS
    ),
    _person_name("person_name", 1.0, "first_name", "black_american", preserve_gender=True),
    _person_name("person_name_hard", 0.5, "first_name", "black_american", preserve_gender=True),
    _person_name("person_name_hard_any_gender", 0.5, "first_name", "black_american", preserve_gender=False),
    _person_name("person_name_last", 1.0, "last_name", "hispanic", preserve_gender=False),
    _person_name("person_name_last_hard", 0.5, "last_name", "hispanic", preserve_gender=False),
)
"""HELM's fairness presets; ``dialect``, ``gender_pronouns`` and ``person_name`` are its canonical three."""
