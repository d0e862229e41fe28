"""HELM's robustness (invariance) perturbations as pure functions of ``(text, rng, **params)``.

The rules follow HELM's augmentations (seeds digest §3.1): a model that understands a question should not
change its answer because the question was lowercased, contracted, misspelt or spaced differently. Each
function draws only from the ``rng`` it is given, and only where a rule can apply, so a variant depends on
the instance's random stream alone (the same under every xdist worker and rerun). Word lists and maps live
in ``data/perturbations`` with their sources; WordNet is read from the system's WordNet 3.0 dict files.
"""

from __future__ import annotations

import functools
import os
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ._tables import rows
from .base import Perturbation, Transform

# -- shared helpers ---------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_GAP = re.compile(r"(?<=\S) +(?=\S)")

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


def _match_case(source: str, target: str) -> str:
    """``target`` written in ``source``'s case: shouting stays shouting, a capital initial stays capital."""
    if source.isupper() and sum(ch.isalpha() for ch in source) > 1:
        return target.upper()
    if source[:1].isupper():
        return target[:1].upper() + target[1:]
    return target


# -- deterministic rewrites -------------------------------------------------------------------------


def lowercase(text: str, rng: random.Random) -> str:
    """HELM ``LowerCasePerturbation``: capitalisation carries no meaning a robust model should rely on."""
    return text.lower()


@functools.cache
def _contraction_rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    """(expansion pattern, contraction) in file order; a repeated expansion takes the later row's contraction.

    That is how HELM's reversed dict behaves. The trailing space in the pattern is HELM's: an expansion at
    the end of a sentence or before punctuation is left alone.
    """
    reverse: dict[str, str] = {}
    for contraction, expansion in rows("contractions.tsv"):
        reverse[expansion] = contraction
    return tuple(
        (re.compile(r"\b(" + re.escape(expansion) + r")\b ", re.IGNORECASE), contraction)
        for expansion, contraction in reverse.items()
    )


@functools.cache
def _expansion_rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    """(contraction pattern, expansion) in file order."""
    return tuple(
        (re.compile(r"\b(" + re.escape(contraction) + r")\b", re.IGNORECASE), expansion)
        for contraction, expansion in rows("contractions.tsv")
    )


def contract(text: str, rng: random.Random) -> str:
    """HELM ``ContractionPerturbation``: every expansion followed by a space becomes its contraction."""
    for pattern, contraction in _contraction_rules():
        text = pattern.sub(lambda m, c=contraction: _match_case(m.group(1), c) + " ", text)
    return text


def expand(text: str, rng: random.Random) -> str:
    """HELM ``ExpansionPerturbation``: every contraction in the map becomes its expansion."""
    for pattern, expansion in _expansion_rules():
        text = pattern.sub(lambda m, e=expansion: _match_case(m.group(1), e), text)
    return text


def extra_space(text: str, rng: random.Random, *, num_spaces: int) -> str:
    """HELM ``ExtraSpacePerturbation``: every space becomes ``num_spaces`` spaces."""
    return text.replace(" ", " " * num_spaces)


# -- random rewrites --------------------------------------------------------------------------------


@functools.cache
def _misspellings() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({correct: tuple(wrong) for correct, *wrong in rows("misspellings.tsv")})


def misspell(text: str, rng: random.Random, *, prob: float) -> str:
    """HELM ``MisspellingPerturbation``: a word with common misspellings becomes one of them with ``prob``.

    The stream is drawn only at words that have misspellings, so unrelated words do not shift it.
    """
    table = _misspellings()

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        options = table.get(word) or table.get(word.lower())
        if not options or rng.random() >= prob:
            return word
        return _match_case(word, rng.choice(options))

    return _WORD.sub(swap, text)


@functools.cache
def _qwerty() -> Mapping[str, str]:
    return MappingProxyType({letter: neighbours for letter, neighbours in rows("qwerty_neighbours.tsv")})


def typos(text: str, rng: random.Random, *, prob: float) -> str:
    """HELM ``TyposPerturbation`` (butter finger): each letter slips, with ``prob``, to a neighbouring key."""
    keyboard = _qwerty()
    out = []
    for ch in text:
        neighbours = keyboard.get(ch.lower()) if ch.isascii() else None
        if neighbours and rng.random() < prob:
            slip = rng.choice(neighbours)
            ch = slip.upper() if ch.isupper() else slip
        out.append(ch)
    return "".join(out)


def space(text: str, rng: random.Random, *, max_spaces: int) -> str:
    """HELM ``SpacePerturbation``: each run of spaces gets a random length in 1..``max_spaces``.

    HELM's docstring says 0..max, which could fuse words; its code, followed here, draws at least one.
    """
    return re.sub(" +", lambda _: " " * rng.randint(1, max_spaces), text)


@functools.cache
def _fillers() -> tuple[str, ...]:
    return tuple(phrase for _category, phrase in rows("filler_words.tsv"))


def filler_words(text: str, rng: random.Random, *, insert_prob: float) -> str:
    """HELM ``FillerWordsPerturbation``: spoken-style hesitations and hedges slipped between words.

    Each gap of spaces between two words gets, with ``insert_prob``, one phrase from ``filler_words.tsv``
    after it; the original spacing is kept, so only the inserted phrase is new.
    """
    phrases = _fillers()

    def gap(match: re.Match[str]) -> str:
        if rng.random() < insert_prob:
            return f"{match.group(0)}{rng.choice(phrases)} "
        return match.group(0)

    return _GAP.sub(gap, text)


def mild_mix(text: str, rng: random.Random, *, misspell_prob: float = 0.1, max_spaces: int = 3) -> str:
    """HELM ``MildMixPerturbation``, the canonical robustness variant: the four mild steps in HELM's order.

    Lowercasing comes first so that contraction matches case-free and misspellings (lowercase keys) apply.
    """
    text = lowercase(text, rng)
    text = contract(text, rng)
    text = misspell(text, rng, prob=misspell_prob)
    return space(text, rng, max_spaces=max_spaces)


# -- WordNet synonyms -------------------------------------------------------------------------------

_WORDNET_POS: Mapping[str, str] = MappingProxyType({"n": "noun", "v": "verb", "a": "adj", "r": "adv"})
_DETACHMENT: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType(
    {
        "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")),
        "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
        "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
        "r": (),
    }
)
"""WordNet's suffix detachment rules (morphy(7WN)), tried when a word is not in the exception lists."""

_NO_WORDNET = (
    "synonym needs WordNet 3.0: install Debian's wordnet-base (apt-get install wordnet-base) "
    "or set WNSEARCHDIR to a WordNet dict folder"
)


def _wordnet_folder() -> Path:
    return Path(os.environ.get("WNSEARCHDIR") or "/usr/share/wordnet")


def _wordnet_files(folder: Path) -> list[Path]:
    return [folder / f"{kind}.{name}" for name in _WORDNET_POS.values() for kind in ("index", "data")] + [
        folder / f"{name}.exc" for name in _WORDNET_POS.values()
    ]


def wordnet_unavailable() -> str | None:
    """One line saying why synonym cannot run here (no WordNet dict files), or None when it can."""
    if all(path.is_file() for path in _wordnet_files(_wordnet_folder())):
        return None
    return _NO_WORDNET


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
        for pos in _WORDNET_POS:
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
        index=MappingProxyType({pos: _read_index(folder / f"index.{name}") for pos, name in _WORDNET_POS.items()}),
        exceptions=MappingProxyType({pos: _read_exceptions(folder / f"{name}.exc") for pos, name in _WORDNET_POS.items()}),
        data=MappingProxyType({pos: (folder / f"data.{name}").read_bytes() for pos, name in _WORDNET_POS.items()}),
    )


def synonym(text: str, rng: random.Random, *, prob: float) -> str:
    """HELM ``SynonymPerturbation``: content words become, with ``prob``, a WordNet synonym.

    Only alphabetic words outside ``FUNCTION_WORDS`` that have synonyms draw from the stream. Raises
    RuntimeError with ``wordnet_unavailable()``'s reason when WordNet is missing.
    """
    reason = wordnet_unavailable()
    if reason is not None:
        raise RuntimeError(reason)
    wordnet = load_wordnet(_wordnet_folder())

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if not (word.isascii() and word.isalpha()) or lower in FUNCTION_WORDS:
            return word
        options = wordnet.synonyms(lower)
        if not options or rng.random() >= prob:
            return word
        return _match_case(word, rng.choice(options))

    return _TOKEN.sub(swap, text)


# -- presets ----------------------------------------------------------------------------------------

_HELM = "HELM (Liang et al. 2022) stanford-crfm/helm benchmark/augmentations"
MILD_MIX_STEPS = "lowercase -> contraction -> misspellings(prob=misspell_prob) -> space(max_spaces)"


def _preset(name: str, transform: Transform, source: str, **params: object) -> Perturbation:
    return Perturbation(
        name=name,
        family="robustness",
        transform=transform,
        params=MappingProxyType(dict(params)),
        perturbs_references=False,
        source=source,
    )


_MISSPELL_SRC = f"{_HELM}/misspelling_perturbation.py; pairs: codespell 2.4.3 (Wikipedia's common misspellings)"
_TYPO_SRC = f"{_HELM}/typos_perturbation.py; HELM's QWERTY neighbour map"

PRESETS: tuple[Perturbation, ...] = (
    _preset("mild_mix", mild_mix, f"{_HELM}/mild_mix_perturbation.py: {MILD_MIX_STEPS}", misspell_prob=0.1, max_spaces=3),
    _preset("lowercase", lowercase, f"{_HELM}/lowercase_perturbation.py"),
    _preset("contraction", contract, f"{_HELM}/contraction_expansion_perturbation.py; map: contractions.tsv"),
    _preset("expansion", expand, f"{_HELM}/contraction_expansion_perturbation.py; map: contractions.tsv"),
    _preset("misspellings", misspell, _MISSPELL_SRC, prob=0.1),
    _preset("misspellings_mild", misspell, _MISSPELL_SRC, prob=0.05),
    _preset("misspellings_medium", misspell, _MISSPELL_SRC, prob=0.2),
    _preset("misspellings_hard", misspell, _MISSPELL_SRC, prob=0.5),
    _preset("typos", typos, _TYPO_SRC, prob=0.1),
    _preset("typos_easy", typos, _TYPO_SRC, prob=0.1),
    _preset("typos_medium", typos, _TYPO_SRC, prob=0.3),
    _preset("typos_hard", typos, _TYPO_SRC, prob=0.5),
    _preset("space", space, f"{_HELM}/space_perturbation.py", max_spaces=3),
    _preset("extra_space", extra_space, f"{_HELM}/extra_space_perturbation.py", num_spaces=2),
    _preset("filler_words", filler_words, f"{_HELM}/filler_words_perturbation.py (after NL-Augmenter)", insert_prob=0.3),
    Perturbation(
        name="synonym",
        family="robustness",
        transform=synonym,
        params=MappingProxyType({"prob": 0.5}),
        perturbs_references=False,
        source=f"{_HELM}/synonym_perturbation.py; WordNet 3.0, POS by most-tagged sense instead of spaCy",
        available=wordnet_unavailable,
    ),
)
"""HELM's named robustness presets (run_expander ``PERTURBATION_SPECS_DICT``), references never perturbed."""
