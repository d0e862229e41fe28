"""HELM robustness perturbations (seeds digest §3.1): each expectation below is worked out from the rule it
tests, and random ones are checked against the rule's invariants rather than only replayed."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.perturbations._tables import rows
from pytest_holistic.perturbations.base import Perturbation
from pytest_holistic.perturbations.robustness import (
    FUNCTION_WORDS,
    PRESETS,
    contract,
    expand,
    extra_space,
    filler_words,
    lowercase,
    mild_mix,
    misspell,
    space,
    synonym,
    typos,
    wordnet_unavailable,
)

QWERTY = dict(rows("qwerty_neighbours.tsv"))
MISSPELLINGS = {correct: tuple(wrong) for correct, *wrong in rows("misspellings.tsv")}
FILLERS = tuple(phrase for _category, phrase in rows("filler_words.tsv"))
needs_wordnet = pytest.mark.skipif(wordnet_unavailable() is not None, reason="WordNet 3.0 dict files not installed")


def rng(seed: int | str = 0) -> random.Random:
    return random.Random(seed)


# -- data files -------------------------------------------------------------------------------------


def test_data_files_have_the_documented_shape() -> None:
    contractions = rows("contractions.tsv")
    assert 70 <= len(contractions) <= 80 and all(len(row) == 2 for row in contractions)
    # One expansion per contraction, so the reversed map is unambiguous: "is not" can only become "isn't".
    assert len({expansion for _c, expansion in contractions}) == len(contractions)
    assert ("isn't", "is not") in contractions and "ain't" not in dict(contractions)
    # HELM's map: 26 letters, never a letter's own neighbour (so a slip always changes the letter).
    assert sorted(QWERTY) == list("abcdefghijklmnopqrstuvwxyz") and all(k not in v for k, v in QWERTY.items())
    assert QWERTY["q"] == "was" and QWERTY["s"] == "weadzx" and QWERTY["m"] == "jkn"
    assert {category for category, _p in rows("filler_words.tsv")} == {"hesitation", "speaker", "uncertainty"}
    assert {"uhm", "I think", "I mean", "maybe", "probably"} <= set(FILLERS)
    assert len(MISSPELLINGS) > 5000
    for correct, wrong in MISSPELLINGS.items():
        assert 1 <= len(wrong) <= 3 and list(wrong) == sorted(wrong) and correct not in wrong
        assert correct.isalpha() and correct.islower() and all(w.isalpha() and w.islower() for w in wrong)
    assert "thier" in MISSPELLINGS["their"] and "beleive" in MISSPELLINGS["believe"]


# -- lowercase, contraction, expansion, extra space (deterministic) ---------------------------------


def test_lowercase() -> None:
    assert lowercase("Hello WORLD, It's Me", rng()) == "hello world, it's me"


def test_contract_needs_a_trailing_space() -> None:
    # "is not" is followed by "." so the negation rule cannot match; "It is " (space after) matches "it is"
    # both times, and the capital I carries over to "It's".
    assert contract("It is not. It is late", rng()) == "It's not. It's late"
    # "is not " matches and becomes "isn't "; the final "it is" ends the text (no space after) and stays.
    assert contract("He is not sure it is", rng()) == "He isn't sure it is"


def test_contract_rule_order_and_case() -> None:
    # Negations run first: "would not " -> "wouldn't "; "I would " then no longer occurs (no space after "would").
    assert contract("I would not go", rng()) == "I wouldn't go"
    # All-capital match -> all-capital contraction; "cannot " (one word) -> "can't".
    assert contract("IT IS cold and we cannot stay", rng()) == "IT'S cold and we can't stay"
    # A lowercase match is written as in the map, so "i am" gives the map's "I'm" (HELM does the same).
    assert contract("i am here", rng()) == "I'm here"
    # No rule applies inside a longer word: "bit is " has no word boundary before "it".
    assert contract("a bit is fine", rng()) == "a bit is fine"


def test_expand_keeps_case() -> None:
    # "It's" capitalised -> "It is"; "I'M" shouting -> "I AM"; "won't" -> "will not"; "Don't" -> "Do not".
    assert expand("It's fine, I'M sure you won't. Don't", rng()) == "It is fine, I AM sure you will not. Do not"
    assert expand("can't, he'd, let's", rng()) == "cannot, he would, let us"


def test_extra_space_multiplies_every_space() -> None:
    # Each of the three spaces becomes two, the double space therefore four.
    assert extra_space("a b  c", rng(), num_spaces=2) == "a  b    c"


# -- misspellings -----------------------------------------------------------------------------------


def test_misspell_at_prob_one_uses_the_table() -> None:
    text = "The receive their because definitely"
    out = misspell(text, rng(1), prob=1.0)
    assert out == "Dthe receieve thier bacause defenitely"  # recorded; checked word by word below
    for before, after in zip(text.split(), out.split(), strict=True):
        options = MISSPELLINGS[before.lower()]
        # A capitalised word gets a capitalised misspelling ("The" -> "Dthe", one of dthe/ethe/hte).
        assert after in {o[:1].upper() + o[1:] for o in options} if before[0].isupper() else after in options


def test_misspell_draws_only_at_table_words() -> None:
    # The stream: for each table word, random() < prob, then choice() only if replaced. Replaying it by hand
    # must give the same text, and the untouched "xyzzy" (not in the table) must not consume draws.
    text = "their xyzzy world because"
    replay = rng(7)
    expected = []
    for word in text.split():
        if word in MISSPELLINGS and replay.random() < 0.5:
            word = replay.choice(MISSPELLINGS[word])
        expected.append(word)
    assert misspell(text, rng(7), prob=0.5) == " ".join(expected)
    stream = rng(3)
    state = stream.getstate()
    assert misspell("xyzzy 42 !!", stream, prob=1.0) == "xyzzy 42 !!" and stream.getstate() == state


def test_misspell_at_prob_zero_is_identity() -> None:
    assert misspell("their world because", rng(), prob=0.0) == "their world because"


# -- typos ------------------------------------------------------------------------------------------


def changed_letters(before: str, after: str) -> list[tuple[str, str]]:
    assert len(before) == len(after)
    return [(b, a) for b, a in zip(before, after, strict=True) if b != a]


def test_typos_slip_to_qwerty_neighbours() -> None:
    out = typos("Hello World 123", rng(2), prob=0.5)
    # Recorded; by the map l->o (l: opk), o->k (o: iklp), d->c (d: erfcxs); capitals and digits kept.
    assert out == "Heooo Wkrlc 123"
    for before, after in changed_letters("Hello World 123", out):
        assert after.lower() in QWERTY[before.lower()] and after.isupper() == before.isupper()


def test_typos_prob_zero_and_one() -> None:
    text = "Quick, BROWN fox! 42"
    assert typos(text, rng(5), prob=0.0) == text
    out = typos(text, rng(5), prob=1.0)
    letters = [ch for ch in text if ch.isascii() and ch.isalpha()]
    assert len(changed_letters(text, out)) == len(letters)  # every mapped letter slipped (never to itself)
    assert [ch for ch in out if not ch.isalpha()] == [ch for ch in text if not ch.isalpha()]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcXYZ .,é"), st.floats(0, 1), st.integers(0, 2**32))
def test_typos_only_ever_slip_to_neighbours(text: str, prob: float, seed: int) -> None:
    for before, after in changed_letters(text, typos(text, rng(seed), prob=prob)):
        assert after.lower() in QWERTY[before.lower()] and after.isupper() == before.isupper()


# -- space, filler words ----------------------------------------------------------------------------


def test_space_keeps_words_and_draws_runs_of_one_to_max() -> None:
    text = "a  b c     d"
    out = space(text, rng(3), max_spaces=3)
    assert out == "a b   c   d"  # recorded; three runs, lengths 1, 3, 3, each within 1..3
    assert out.split(" ") != text.split(" ") and out.split() == text.split()
    assert [len(run) for run in re.findall(" +", out)] == [1, 3, 3]
    assert space(text, rng(3), max_spaces=1) == "a b c d"


def test_filler_words() -> None:
    assert filler_words("a b c", rng(), insert_prob=0.0) == "a b c"
    # At prob 1 every gap between two words gets exactly one filler after the original space.
    phrase = "|".join(re.escape(p) for p in FILLERS)
    out = filler_words("a b  c", rng(4), insert_prob=1.0)
    assert re.fullmatch(rf"a (?:{phrase}) b  (?:{phrase}) c", out)
    # Spaces at the edges are not gaps between words.
    assert filler_words(" a ", rng(4), insert_prob=1.0) == " a "


# -- mild mix ---------------------------------------------------------------------------------------


def test_mild_mix_lowercases_then_contracts() -> None:
    # lowercase: "it is not cold. it is late"; contract: "is not " -> "isn't ", then "it is " -> "it's " once
    # (the first "it is" is now "it isn't"). None of it/isn/t/cold/s/late is in the misspelling table, so
    # misspell draws nothing, and space draws one run length per gap: replay those four draws by hand.
    assert not {"it", "isn", "t", "cold", "s", "late"} & set(MISSPELLINGS)
    words = ["it", "isn't", "cold.", "it's", "late"]
    replay = rng(11)
    expected = words[0] + "".join(" " * replay.randint(1, 3) + word for word in words[1:])
    assert mild_mix("It is NOT COLD. It is late", rng(11)) == expected


# -- synonym ----------------------------------------------------------------------------------------

# WordNet 3.0 data.noun: car's five noun synsets (02958343 car/auto/automobile/machine/motorcar, 02959942
# car/railcar/railway_car/railroad_car, 02960352 car/elevator_car, 02960501 car/gondola, 02934451
# cable_car/car); data.adj: happy's four synsets add felicitous, glad, well-chosen.
CAR = {
    "auto",
    "automobile",
    "machine",
    "motorcar",
    "railcar",
    "railway car",
    "railroad car",
    "elevator car",
    "gondola",
    "cable car",
}


@needs_wordnet
def test_synonym_picks_a_wordnet_synonym() -> None:
    out = synonym("car", rng(), prob=1.0)
    assert out in CAR
    assert synonym("Happy", rng(), prob=1.0) in {"Felicitous", "Glad", "Well-chosen"}
    assert synonym("car happy", rng(), prob=0.0) == "car happy"


@needs_wordnet
def test_synonym_uses_base_forms_and_skips_function_words() -> None:
    from pytest_holistic.perturbations.robustness import _wordnet_folder, load_wordnet

    wordnet = load_wordnet(_wordnet_folder())
    assert set(wordnet.synonyms("cars")) == CAR  # morphy: cars -> car (noun rule s -> "")
    assert "go" not in wordnet.synonyms("went") and "move" in wordnet.synonyms("went")  # verb.exc: went -> go
    # "running": the verb base "run" has far more tagged senses than noun/adj "running", so verbs win.
    assert {"operate", "campaign"} <= set(wordnet.synonyms("running"))
    stream = rng(2)
    state = stream.getstate()
    text = "The of and is it a"
    assert {"the", "of", "and", "is", "it", "a"} <= FUNCTION_WORDS
    assert synonym(text, stream, prob=1.0) == text and stream.getstate() == state


def test_wordnet_unavailable_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WNSEARCHDIR", str(tmp_path))
    reason = wordnet_unavailable()
    assert reason is not None and "\n" not in reason and "wordnet-base" in reason and "WNSEARCHDIR" in reason
    preset = next(p for p in PRESETS if p.name == "synonym")
    assert preset.unavailable() == reason
    with pytest.raises(RuntimeError, match="WordNet 3.0"):
        synonym("car", rng(), prob=1.0)


# -- presets and properties -------------------------------------------------------------------------


def test_presets_record_helm_parameters() -> None:
    assert {p.name: dict(p.params) for p in PRESETS} == {
        "mild_mix": {"misspell_prob": 0.1, "max_spaces": 3},
        "lowercase": {},
        "contraction": {},
        "expansion": {},
        "misspellings": {"prob": 0.1},
        "misspellings_mild": {"prob": 0.05},
        "misspellings_medium": {"prob": 0.2},
        "misspellings_hard": {"prob": 0.5},
        "typos": {"prob": 0.1},
        "typos_easy": {"prob": 0.1},
        "typos_medium": {"prob": 0.3},
        "typos_hard": {"prob": 0.5},
        "space": {"max_spaces": 3},
        "extra_space": {"num_spaces": 2},
        "filler_words": {"insert_prob": 0.3},
        "synonym": {"prob": 0.5},
    }
    for preset in PRESETS:
        assert preset.family == "robustness" and not preset.perturbs_references and "HELM" in preset.source
    mild = next(p for p in PRESETS if p.name == "mild_mix")
    assert "lowercase -> contraction -> misspellings" in mild.source


RUNNABLE = [p for p in PRESETS if p.unavailable() is None]


@pytest.mark.parametrize("preset", RUNNABLE, ids=lambda p: p.name)
@settings(max_examples=40, deadline=None)
@given(text=st.text(), seed=st.integers(0, 2**32))
def test_every_preset_is_deterministic_and_total(preset: Perturbation, text: str, seed: int) -> None:
    out = preset(text, rng(seed))
    assert isinstance(out, str) and out == preset(text, rng(seed))


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")))
def test_typos_leave_text_without_ascii_letters_alone(text: str) -> None:
    assert typos(text, rng(), prob=1.0) == text


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters=" ")))
def test_contract_without_a_space_is_identity(text: str) -> None:
    # Every contraction rule ends in a space, so text without one cannot match.
    assert contract(text, rng()) == text


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="'")))
def test_expand_without_an_apostrophe_is_identity(text: str) -> None:
    # Every contraction in the map has an apostrophe.
    assert expand(text, rng()) == text


@settings(max_examples=60, deadline=None)
@given(st.text())
def test_misspell_leaves_words_outside_the_table_alone(text: str) -> None:
    if any(word.lower() in MISSPELLINGS for word in re.findall(r"\w+", text)):
        return
    assert misspell(text, rng(), prob=1.0) == text


@settings(max_examples=60, deadline=None)
@given(st.text().map(str.lower))
def test_lowercase_on_lowercase_text_is_identity(text: str) -> None:
    assert lowercase(text, rng()) == text


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab .", max_size=30), st.integers(1, 4), st.integers(0, 2**32))
def test_space_only_changes_run_lengths(text: str, max_spaces: int, seed: int) -> None:
    out = space(text, rng(seed), max_spaces=max_spaces)
    assert re.sub(" +", " ", out) == re.sub(" +", " ", text)
    assert all(1 <= len(run) <= max_spaces for run in re.findall(" +", out))
