"""HELM's robustness (invariance) perturbations as pure functions of ``(text, rng, **params)``.

A model that understands a question should not change its answer because the question was lowercased,
contracted, misspelt or spaced differently. Each function applies the rule of HELM 0.5.16's perturbation of
the same name (``helm/benchmark/augmentations``), draws from the ``rng`` it is given exactly where HELM draws,
and so gives HELM's output for the same instance and word lists. Word lists and maps live in
``data/perturbations`` with their sources; the misspelling table can be the user's copy of HELM's
(:mod:`.wordlists`); WordNet is read from the system's WordNet 3.0 dict files.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ..errors import UserError
from ..wordnet_files import PARTS_OF_SPEECH, wordnet_folder, wordnet_unavailable
from ._case import case_rule, match_case
from ._tables import rows
from .base import Perturbation, Transform
from .wordlists import PROJECT, WordLists

# -- shared helpers ---------------------------------------------------------------------------------

_TOKEN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")

_CLOSED_CLASSES = (
    "a an the this that these those some any each every either neither no another such what which whose",  # determiners
    "i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself",  # pronouns
    "we us our ours ourselves they them their theirs themselves who whom whoever whatever one ones",
    "am is are was were be been being do does did done doing have has had having",  # auxiliaries
    "will would shall should can could may might must ought",  # modals
    "of in on at by for with about against between into through during before after above below to from up down",
    "out off over under again further then once upon within without along across behind beyond toward towards onto",
    "near past since until till via per among amid despite except like unlike than",  # prepositions
    "and but or nor so yet if because although though while whereas unless whether as both",  # conjunctions
    "also too very not only just even ever never here there where when why how",  # particles, adverbs
    "all most more less least few many much own same other else quite rather",  # quantifiers
)
FUNCTION_WORDS: frozenset[str] = frozenset(word for group in _CLOSED_CLASSES for word in group.split())
"""Closed-class words, which HELM's spaCy tagger mostly labels DET/PRON/AUX/ADP/CCONJ/PART and its synonym step
therefore skips; with no tagger here they are skipped by list, else "a" would become "angstrom", "is" "exist"."""


# -- deterministic rewrites -------------------------------------------------------------------------


def lowercase(text: str, rng: random.Random) -> str:
    """HELM ``LowerCasePerturbation``: capitalisation carries no meaning a robust model should rely on."""
    return text.lower()


@functools.cache
def _contractions() -> Mapping[str, str]:
    """contraction -> expansion, in the file's (HELM's) order."""
    return MappingProxyType({contraction: expansion for contraction, expansion in rows("contractions.tsv")})


@functools.cache
def _contraction_rule() -> tuple[Mapping[str, str], re.Pattern[str]]:
    """HELM's reversed map (a later row's contraction wins) and its one pattern: an expansion, a word end, a space.

    The trailing space is HELM's: an expansion at the end of the text or before punctuation is left alone.
    """
    reverse = {expansion: contraction for contraction, expansion in _contractions().items()}
    alternatives = "|".join(re.escape(expansion) for expansion in reverse)
    return MappingProxyType(reverse), re.compile(rf"\b({alternatives})\b ", re.IGNORECASE)


@functools.cache
def _expansion_rule() -> re.Pattern[str]:
    """One case-insensitive pattern over every contraction in file order: an earlier row wins an overlap."""
    return re.compile(r"\b(" + "|".join(re.escape(c) for c in _contractions()) + r")\b", re.IGNORECASE)


def _lookup(table: Mapping[str, str], found: str) -> str | None:
    """The map's entry for a case-insensitive match: as written, else lower-cased (HELM's two lookups)."""
    return table.get(found, table.get(found.lower()))


def contract(text: str, rng: random.Random) -> str:
    """HELM ``ContractionPerturbation``: every expansion followed by a space becomes its contraction, in HELM's case."""
    reverse, pattern = _contraction_rule()

    def one(match: re.Match[str]) -> str:
        contraction = _lookup(reverse, match.group(1))
        # Case-insensitive matching also accepts e.g. the long s for "s" ("ſhe is "), whose lower case is no key:
        # HELM raises there (a None contraction); the text is kept instead.
        return match.group(0) if contraction is None else match_case(match.group(1), contraction) + " "

    return pattern.sub(one, text)


def expand(text: str, rng: random.Random) -> str:
    """HELM ``ExpansionPerturbation``: every contraction in the map becomes its expansion, in HELM's case."""
    table = _contractions()

    def one(match: re.Match[str]) -> str:
        found = match.group(1)
        expansion = _lookup(table, found)
        if expansion is not None:
            return match_case(found, expansion)
        # A case-insensitive match whose lower case is no key ("ſhe's"; the "İ" of "İ'm" lower-cases to two characters):
        # HELM's case rule gets None. Where the rule would keep the target as written, HELM's substitution is None,
        # which deletes the match; where it would change its case, HELM raises, and the text is kept instead.
        return "" if case_rule(found) == "as_written" else found

    return _expansion_rule().sub(one, text)


def extra_space(text: str, rng: random.Random, *, num_spaces: int) -> str:
    """HELM ``ExtraSpacePerturbation``: every space becomes ``num_spaces`` spaces."""
    return text.replace(" ", " " * num_spaces)


# -- random rewrites --------------------------------------------------------------------------------


def misspell(text: str, rng: random.Random, *, prob: float, word_lists: WordLists = PROJECT) -> str:
    """HELM ``MisspellingPerturbation``: a word of the table becomes, with ``prob``, one of its misspellings.

    HELM's lookup: one case-sensitive pattern over the table's words (``wordlists.Misspellings``), so only
    listed spellings match ("The" only if "The" is a key). Each match draws ``random() < prob``, then the
    choice among its misspellings, written in the word's case.
    """
    misspellings = word_lists.misspelling_table()

    def one(match: re.Match[str]) -> str:
        word = match.group(1)
        if not rng.random() < prob:
            return word
        options = misspellings.table.get(word)
        # HELM raises here (KeyError, or IndexError for an empty list) when a key holding regex syntax matched
        # other text; the word is kept instead.
        return match_case(word, rng.choice(options)) if options else word

    return misspellings.pattern.sub(one, text)


@functools.cache
def _qwerty() -> Mapping[str, str]:
    return MappingProxyType({letter: neighbours for letter, neighbours in rows("qwerty_neighbours.tsv")})


def typos(text: str, rng: random.Random, *, prob: float) -> str:
    """HELM ``TyposPerturbation`` (butter finger): each letter slips, with ``prob``, to a neighbouring key.

    HELM's rule per character: take its lower case; if that is a key of the map, draw ``random() < prob`` and
    then the neighbour; write the result upper-cased whenever the lower case differed from the character. So
    a character whose case does not round-trip changes even without a slip (KELVIN SIGN becomes "K", the
    title-case "ǅ" becomes "Ǆ"), and one whose lower case is a mapped letter draws like that letter.
    """
    keyboard = _qwerty()
    out = []
    for char in text:
        lower = char.lower()
        typed = rng.choice(keyboard[lower]) if lower in keyboard and rng.random() < prob else lower
        out.append(typed if lower == char else typed.upper())
    return "".join(out)


def space(text: str, rng: random.Random, *, max_spaces: int) -> str:
    """HELM ``SpacePerturbation``: each run of spaces gets a random length in 1..``max_spaces``.

    HELM's docstring says 0..max, which could fuse words; its code, followed here, draws at least one.
    """
    return re.sub(" +", lambda _: " " * rng.randint(1, max_spaces), text)


FILLER_KINDS = ("speaker", "uncertain", "fill")
"""The phrase lists of ``filler_words.tsv``, in the order HELM concatenates them."""


@functools.cache
def _fillers(kinds: tuple[str, ...]) -> tuple[str, ...]:
    table = rows("filler_words.tsv")
    return tuple(phrase for kind in FILLER_KINDS if kind in kinds for category, phrase in table if category == kind)


def filler_words(
    text: str,
    rng: random.Random,
    *,
    insert_prob: float,
    speaker_ph: bool = True,
    uncertain_ph: bool = True,
    fill_ph: bool = True,
    max_num_insert: int | None = None,
) -> str:
    """HELM ``FillerWordsPerturbation``: spoken-style fillers and hedges slipped in before words.

    The text is split at single spaces; before each piece, the first included, ``random() <= insert_prob``
    inserts a phrase drawn from the enabled lists (speaker phrases, uncertainty, fillers), until
    ``max_num_insert`` (None: no limit); the pieces are joined with single spaces again.
    """
    enabled = tuple(kind for kind, on in zip(FILLER_KINDS, (speaker_ph, uncertain_ph, fill_ph)) if on)
    if not enabled:
        raise UserError("filler_words needs at least one of speaker_ph, uncertain_ph, fill_ph")
    phrases = _fillers(enabled)
    inserted = 0
    pieces: list[str] = []
    for piece in text.split(" "):
        if (max_num_insert is None or inserted < max_num_insert) and rng.random() <= insert_prob:
            pieces.append(rng.choice(phrases))
            inserted += 1
        pieces.append(piece)
    return " ".join(pieces)


def mild_mix(
    text: str, rng: random.Random, *, misspell_prob: float = 0.1, max_spaces: int = 3, word_lists: WordLists = PROJECT
) -> str:
    """HELM ``MildMixPerturbation``, the canonical robustness variant: the four mild steps in HELM's order."""
    text = lowercase(text, rng)
    text = contract(text, rng)
    text = misspell(text, rng, prob=misspell_prob, word_lists=word_lists)
    return space(text, rng, max_spaces=max_spaces)


# -- WordNet synonyms -------------------------------------------------------------------------------

_DETACHMENT: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType(
    {
        "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")),
        "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
        "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
        "r": (),
    }
)
"""WordNet's suffix detachment rules (morphy(7WN)), tried when a word is not in the exception lists."""

@dataclass(frozen=True)
class _IndexEntry:
    tagged: int
    senses: int
    offsets: tuple[int, ...]


@dataclass(frozen=True)
class WordNet:
    """WordNet 3.0 read from its dict files: index lines by lemma, exception lists, data files as bytes.

    Index lines are parsed on lookup and synsets are read at their byte offsets, so loading costs one pass
    over the files and nothing is decoded that synonym does not ask for.
    """

    index: Mapping[str, Mapping[str, str]]
    exceptions: Mapping[str, Mapping[str, tuple[str, ...]]]
    data: Mapping[str, bytes]

    def entry(self, lemma: str, pos: str) -> _IndexEntry | None:
        line = self.index[pos].get(lemma)
        if line is None:
            return None
        fields = line.split()
        synsets, pointers = int(fields[2]), int(fields[3])
        senses, tagged = int(fields[4 + pointers]), int(fields[5 + pointers])
        return _IndexEntry(tagged, senses, tuple(int(offset) for offset in fields[6 + pointers : 6 + pointers + synsets]))

    def base_forms(self, word: str, pos: str) -> tuple[str, ...]:
        """Morphy: the word's exception-list bases, else the word and its detached forms, kept if indexed."""
        irregular = self.exceptions[pos].get(word)
        if irregular is not None:
            candidates = [word, *irregular]
        else:
            candidates = [word] + [
                word[: -len(suffix)] + ending
                for suffix, ending in _DETACHMENT[pos]
                if word.endswith(suffix) and len(word) > len(suffix)
            ]
        return tuple(dict.fromkeys(form for form in candidates if form in self.index[pos]))

    def lemmas(self, pos: str, offset: int) -> tuple[str, ...]:
        """The words of the synset at ``offset`` in ``data.<pos>``, adjective markers like ``(a)`` removed."""
        data = self.data[pos]
        fields = data[offset : data.index(b"\n", offset)].decode("utf-8").split()
        count = int(fields[3], 16)
        return tuple(re.sub(r"\(\w+\)$", "", word).replace("_", " ") for word in fields[4 : 4 + 2 * count : 2])

    def synonyms(self, word: str) -> tuple[str, ...]:
        """Sorted lemma names sharing a synset with ``word`` in its most frequently tagged part of speech.

        With no POS tagger, the part of speech whose base form has the most sense-tagged occurrences in
        SemCor (index ``tagsense_cnt``; ties: more senses, then noun, verb, adjective, adverb) stands in for
        spaCy's tag. The word and its base forms are not synonyms of themselves.
        """
        best: tuple[tuple[int, int], str, tuple[str, ...], list[_IndexEntry]] | None = None
        for pos in PARTS_OF_SPEECH:
            bases = self.base_forms(word, pos)
            entries = [entry for entry in (self.entry(base, pos) for base in bases) if entry is not None]
            if not entries:
                continue
            rank = (max(entry.tagged for entry in entries), max(entry.senses for entry in entries))
            if best is None or rank > best[0]:
                best = (rank, pos, bases, entries)
        if best is None:
            return ()
        _rank, pos, bases, entries = best
        own = {word, *bases}
        found = {lemma for entry in entries for offset in entry.offsets for lemma in self.lemmas(pos, offset)}
        return tuple(sorted(lemma for lemma in found if lemma.lower() not in own))


def _read_index(path: Path) -> Mapping[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return MappingProxyType({line.split(" ", 1)[0]: line for line in lines if line and not line.startswith(" ")})


def _read_exceptions(path: Path) -> Mapping[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        inflected, *bases = line.split()
        table[inflected] = tuple(bases)
    return MappingProxyType(table)


@functools.cache
def load_wordnet(folder: Path) -> WordNet:
    """WordNet from ``folder``, parsed once per process and folder (keyed by folder so tests can switch)."""
    return WordNet(
        index=MappingProxyType({pos: _read_index(folder / f"index.{name}") for pos, name in PARTS_OF_SPEECH.items()}),
        exceptions=MappingProxyType({pos: _read_exceptions(folder / f"{name}.exc") for pos, name in PARTS_OF_SPEECH.items()}),
        data=MappingProxyType({pos: (folder / f"data.{name}").read_bytes() for pos, name in PARTS_OF_SPEECH.items()}),
    )


def synonym(text: str, rng: random.Random, *, prob: float) -> str:
    """HELM ``SynonymPerturbation``: content words become, with ``prob``, a WordNet synonym.

    Only alphabetic words outside ``FUNCTION_WORDS`` that have synonyms draw from the stream. Raises
    RuntimeError with ``wordnet_unavailable()``'s reason when WordNet is missing.
    """
    reason = wordnet_unavailable()
    if reason is not None:
        raise RuntimeError(reason)
    wordnet = load_wordnet(wordnet_folder())

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if not (word.isascii() and word.isalpha()) or lower in FUNCTION_WORDS:
            return word
        options = wordnet.synonyms(lower)
        if not options or rng.random() >= prob:
            return word
        return match_case(word, rng.choice(options))

    return _TOKEN.sub(swap, text)


# -- presets ----------------------------------------------------------------------------------------

_HELM = "HELM 0.5.16 (Liang et al. 2022) stanford-crfm/helm benchmark/augmentations"
MILD_MIX_STEPS = "lowercase -> contraction -> misspellings(prob=misspell_prob) -> space(max_spaces)"


def _preset(name: str, transform: Transform, source: str, lists: tuple[str, ...] = (), **params: object) -> Perturbation:
    return Perturbation(
        name=name,
        family="robustness",
        transform=transform,
        params=MappingProxyType(dict(params)),
        perturbs_references=False,
        source=source,
        lists=lists,
    )


_MISSPELLINGS = ("misspellings",)
_MISSPELL_SRC = f"{_HELM}/misspelling_perturbation.py; table: see word_lists"
_TYPO_SRC = f"{_HELM}/typos_perturbation.py; HELM's QWERTY neighbour map"
_CONTRACTION_SRC = f"{_HELM}/contraction_expansion_perturbation.py; HELM's contraction map (contractions.tsv)"

PRESETS: tuple[Perturbation, ...] = (
    _preset(
        "mild_mix",
        mild_mix,
        f"{_HELM}/mild_mix_perturbation.py: {MILD_MIX_STEPS}",
        _MISSPELLINGS,
        misspell_prob=0.1,
        max_spaces=3,
    ),
    _preset("lowercase", lowercase, f"{_HELM}/lowercase_perturbation.py"),
    _preset("contraction", contract, _CONTRACTION_SRC),
    _preset("expansion", expand, _CONTRACTION_SRC),
    _preset("misspellings", misspell, _MISSPELL_SRC, _MISSPELLINGS, prob=0.1),
    _preset("misspellings_mild", misspell, _MISSPELL_SRC, _MISSPELLINGS, prob=0.05),
    _preset("misspellings_medium", misspell, _MISSPELL_SRC, _MISSPELLINGS, prob=0.2),
    _preset("misspellings_hard", misspell, _MISSPELL_SRC, _MISSPELLINGS, prob=0.5),
    _preset("typos", typos, _TYPO_SRC, prob=0.1),
    _preset("typos_easy", typos, _TYPO_SRC, prob=0.1),
    _preset("typos_medium", typos, _TYPO_SRC, prob=0.3),
    _preset("typos_hard", typos, _TYPO_SRC, prob=0.5),
    _preset("space", space, f"{_HELM}/space_perturbation.py", max_spaces=3),
    _preset("extra_space", extra_space, f"{_HELM}/extra_space_perturbation.py", num_spaces=2),
    _preset(
        "filler_words",
        filler_words,
        f"{_HELM}/filler_words_perturbation.py (after NL-Augmenter); HELM's filler preset: no speaker phrases",
        insert_prob=0.3,
        speaker_ph=False,
    ),
    Perturbation(
        name="synonym",
        family="robustness",
        transform=synonym,
        params=MappingProxyType({"prob": 0.5}),
        perturbs_references=False,
        source=f"{_HELM}/synonym_perturbation.py; WordNet 3.0 dict files, POS by most-tagged sense instead of spaCy",
        available=wordnet_unavailable,
    ),
)
"""HELM's named robustness presets (run_expander ``PERTURBATION_SPECS_DICT``), references never perturbed."""
