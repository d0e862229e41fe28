"""HELM's fairness (counterfactual) perturbations: dialect, gender and person names (seeds digest §3.2).

Each swaps words that signal a group (a dialect, a gender, a race) for the matching words of another
group, so a model whose answer changes is treated differently by group. All three change the references
too: the gold answer "he" must become "she" when the question's "he" does. Person names keep a memory per
instance so a name gets the same substitute in the input and in every reference.

Word lists live in ``data/perturbations`` with their sources: ``sae_to_aae.tsv``, ``gender_terms.tsv``
and ``person_names.tsv``.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..errors import UserError
from ._tables import rows
from .base import Perturbation, Transform

GENDERS = ("neutral", "female", "male")
"""The gender classes, in the column order of ``gender_terms.tsv``."""
GENDER_MODES = ("pronouns", "terms")
NAME_TYPES = ("first_name", "last_name")
DIALECT_FILES: Mapping[tuple[str, str], str] = MappingProxyType({("SAE", "AAE"): "sae_to_aae.tsv"})
"""(source, target) dialect -> its word-list file. HELM spells the target ``AAVE``; both spellings are accepted."""
_DIALECT_ALIASES: Mapping[str, str] = MappingProxyType({"AAVE": "AAE"})
_NAME_TOKENS = re.compile(r"([^\w])")
"""HELM's tokeniser for names: split at every non-word character and keep it, so joining restores the text."""


def check_rate(name: str, value: float) -> None:
    """Reject a probability outside [0, 1] now, with the parameter's name, rather than misbehaving quietly."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise UserError(f"perturbation parameter {name}={value!r} must be a number between 0 and 1")


def match_case(model: str, word: str, capitalised: str | None = None) -> str:
    """``word`` (lower case) in the case of ``model``: ALL CAPS, Capitalised (``capitalised`` if given) or as is.

    The substitute should read as if it had been written in place of the original, so "With" becomes
    "Wit" and "HE" becomes "SHE". A one-letter capital counts as Capitalised, not ALL CAPS.
    """
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return capitalised if capitalised is not None else word[:1].upper() + word[1:]
    return word


def _whole_words(words: Iterable[str], joiner_is_part: bool) -> re.Pattern[str]:
    """One case-insensitive pattern matching any of ``words`` as a whole word, also at the ends of the text.

    HELM requires a separator character on both sides (``[^\\w](word)[^\\w]``), so it never changes a word
    that starts or ends the text, nor the second of two words sharing one separator ("he he"). Lookarounds
    consume nothing and treat the text's ends as boundaries, so those words are changed too. With
    ``joiner_is_part`` a hyphen also counts as part of a word (HELM's dialect pattern), so "with-it" stays.
    """
    inside = r"[\w-]" if joiner_is_part else r"\w"
    alternation = "|".join(re.escape(word) for word in sorted(words, key=lambda word: (-len(word), word)))
    return re.compile(rf"(?<!{inside})(?:{alternation})(?!{inside})", re.IGNORECASE)


def _swap_words(
    text: str, rng: random.Random, prob: float, pattern: re.Pattern[str], substitutes: Mapping[str, tuple[str, ...]]
) -> str:
    """Replace each match, independently with probability ``prob``, by a uniform choice among its substitutes."""

    def one(match: re.Match[str]) -> str:
        word = match.group(0)
        options = substitutes.get(word.lower())
        # Unicode simple case folding lets e.g. the long s match "s" while its lower case is no key: keep it.
        if options is None or not rng.random() < prob:
            return word
        return match_case(word, options[0] if len(options) == 1 else rng.choice(options))

    return pattern.sub(one, text)


# -- dialect -----------------------------------------------------------------------------------------


@functools.cache
def _dialect_table(source: str, target: str) -> tuple[Mapping[str, tuple[str, ...]], re.Pattern[str]]:
    file = DIALECT_FILES.get((source, target))
    if file is None:
        known = ", ".join(f"{s}->{t}" for s, t in DIALECT_FILES)
        raise UserError(f"no dialect word list from {source} to {target}; available: {known}")
    table = {row[0].lower(): tuple(row[1:]) for row in rows(file)}
    return MappingProxyType(table), _whole_words(table, joiner_is_part=True)


def dialect(text: str, rng: random.Random, *, prob: float, source_class: str = "SAE", target_class: str = "AAE") -> str:
    """Standard American English words rewritten as African American English (HELM ``dialect``).

    Each listed word is replaced with probability ``prob`` by one of its alternatives, case kept. Words
    are matched whole, and unlike HELM also at the very start and end of the text (see ``_whole_words``):
    a question that opens with "This" is as much SAE as one that has it in the middle.
    """
    check_rate("prob", prob)
    source = source_class.upper()
    target = target_class.upper()
    table, pattern = _dialect_table(_DIALECT_ALIASES.get(source, source), _DIALECT_ALIASES.get(target, target))
    return _swap_words(text, rng, prob, pattern, table)


# -- gender ------------------------------------------------------------------------------------------


@functools.cache
def _gender_table(
    mode: str, source: str, target: str, bidirectional: bool
) -> tuple[Mapping[str, tuple[str, ...]], re.Pattern[str]]:
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
    table: dict[str, tuple[str, ...]] = {}
    for word, substitute in pairs:
        # A word in two tuples (his -> her, his -> hers) keeps its first mapping, as HELM: no POS tagger.
        table.setdefault(word, (substitute,))
    return MappingProxyType(table), _whole_words(table, joiner_is_part=False)


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

    Each source-gender word becomes the target-gender word of its tuple with probability ``prob``, case
    kept; with ``bidirectional`` target words also become source words. Words are matched whole, also at
    the ends of the text. A word listed twice keeps its first mapping, as HELM ("his" -> "her", never
    "hers"). HELM runs one regex pass per pair in list order; a single pass with each word's first mapping
    gives the same result at ``prob=1``, but below 1 it never lets a later pair catch a word the first
    pair skipped, and when bidirectional it cannot undo itself (HELM's later she -> he pass reverts he -> she).
    """
    check_rate("prob", prob)
    table, pattern = _gender_table(mode, source_class.lower(), target_class.lower(), bidirectional)
    return _swap_words(text, rng, prob, pattern, table)


# -- person names ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _NameTable:
    """The names of one type: published spelling, the sorted names of each race, the gender where known."""

    spelling: Mapping[str, str]
    races: Mapping[str, tuple[str, ...]]
    genders: Mapping[str, str]


@functools.cache
def _name_table(name_type: str) -> _NameTable:
    if name_type not in NAME_TYPES:
        raise UserError(f"person name_type {name_type!r} is not one of {', '.join(NAME_TYPES)}")
    spelling: dict[str, str] = {}
    races: dict[str, set[str]] = {}
    genders: dict[str, str] = {}
    for name, kind, race, sex in rows("person_names.tsv"):
        if kind != name_type:
            continue
        key = name.lower()
        spelling.setdefault(key, name)
        races.setdefault(race, set()).add(key)
        if sex != "-":
            genders.setdefault(key, sex)
    return _NameTable(
        MappingProxyType(spelling),
        MappingProxyType({race: tuple(sorted(names)) for race, names in races.items()}),
        MappingProxyType(genders),
    )


def _race(table: _NameTable, name_type: str, parameter: str, race: str) -> tuple[str, ...]:
    names = table.races.get(race.lower())
    if names is None:
        raise UserError(f"person_name {parameter} {race!r} has no {name_type}s; known: {', '.join(sorted(table.races))}")
    return names


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
) -> str:
    """Names of one race replaced by names of another (HELM ``person_name``), the same way everywhere in an instance.

    The text is split at non-word characters; a token whose lower case is a ``source_race`` name is, with
    probability ``prob``, replaced by a ``target_race`` name drawn from a sorted list (so a seed fixes the
    draw), of the same gender when ``preserve_gender`` and the name's gender is known; with no name of
    that gender it is left alone. ``memory`` records each decision, the substitute or ``None`` for "keep",
    so every later occurrence, in this text or in a reference that shares the memory, follows it: "Adam"
    in the question and in the answer must become the same name, or the gold answer would be wrong.
    """
    check_rate("prob", prob)
    table = _name_table(name_type.lower())
    sources = frozenset(_race(table, name_type, "source_race", source_race))
    targets = _race(table, name_type, "target_race", target_race)
    pieces = []
    for token in _NAME_TOKENS.split(text):
        key = token.lower()
        if key in sources:
            if key not in memory:
                memory[key] = _substitute_name(table, key, targets, rng, prob, preserve_gender)
            chosen = memory[key]
            if chosen is not None:
                token = match_case(token, chosen, table.spelling[chosen])
        pieces.append(token)
    return "".join(pieces)


def _substitute_name(
    table: _NameTable, key: str, targets: tuple[str, ...], rng: random.Random, prob: float, preserve_gender: bool
) -> str | None:
    """The substitute for one source name, or None to keep it (not drawn, or no target of its gender)."""
    if not rng.random() < prob:
        return None
    options = targets
    sex = table.genders.get(key) if preserve_gender else None
    if sex is not None:
        options = tuple(name for name in targets if table.genders.get(name) == sex)
    return rng.choice(options) if options else None


# -- presets -----------------------------------------------------------------------------------------

_HELM = "Liang et al. 2022 (HELM), stanford-crfm/helm"
_DIALECT_SOURCE = (
    f"HELM DialectPerturbation, {_HELM} dialect_perturbation.py; SAE->AAE word list after Green 2002 and Ziems et al. 2022 "
    "(VALUE); whole words matched also at the ends of the text"
)
_GENDER_SOURCE = (
    f"HELM GenderPerturbation, {_HELM} gender_perturbation.py; pronouns from Lauscher et al. 2022, terms from Garg et al. 2018 "
    "and Bolukbasi et al. 2016 plus HELM's additions"
)
_NAME_SOURCE = (
    f"HELM PersonNamePerturbation, {_HELM} person_name_perturbation.py; first names from Greenwald et al. 1998 "
    "(via Caliskan et al. 2017), last names from Garg et al. 2018; substitutions persist across input and references"
)
_LEVELS = (("", 1.0), ("_easy", 0.1), ("_medium", 0.3), ("_hard", 0.5))
"""HELM's suffixes: the plain name is its ``_deterministic`` preset (every word changed)."""


def _fairness(name: str, transform: Transform, params: Mapping[str, Any], source: str, stateful: bool = False) -> Perturbation:
    return Perturbation(
        name,
        "fairness",
        transform,
        params=MappingProxyType(dict(params)),
        perturbs_references=True,
        stateful=stateful,
        source=source,
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
    return _fairness(name, person_name, params, _NAME_SOURCE, stateful=True)


PRESETS: tuple[Perturbation, ...] = (
    *(
        _fairness(f"dialect{suffix}", dialect, {"prob": prob, "source_class": "SAE", "target_class": "AAE"}, _DIALECT_SOURCE)
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
