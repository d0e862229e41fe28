"""HELM robustness perturbations: each expectation below is worked out by hand from the HELM 0.5.16 rule it tests
(and was checked against HELM's own code); random ones are checked against the rule's invariants or replayed
draw by draw. The conformance suite (tests/conformance/test_perturbations.py) compares whole presets with HELM."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.perturbations import wordlists
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
    assert len(contractions) == 77 and all(len(row) == 2 for row in contractions)  # HELM's CONTRACTION_MAP
    # "ain't" and the later "isn't" share "is not": reversed, the later row wins, so "is not" becomes "isn't".
    assert contractions.index(("ain't", "is not")) < contractions.index(("isn't", "is not"))
    assert ("I'm", "I am") in contractions and ("i'm", "i am") in contractions
    # HELM's map: 26 letters, never a letter's own neighbour (so a slip always changes the letter).
    assert sorted(QWERTY) == list("abcdefghijklmnopqrstuvwxyz") and all(k not in v for k, v in QWERTY.items())
    assert QWERTY["q"] == "was" and QWERTY["s"] == "weadzx" and QWERTY["m"] == "jkn"
    assert [category for category, _p in rows("filler_words.tsv")] == ["speaker"] * 9 + ["uncertain"] * 5 + ["fill"] * 9
    assert {"uhm", "I think", "I mean", "maybe", "probably", "you know"} <= set(FILLERS)
    assert len(MISSPELLINGS) > 5000
    for correct, wrong in MISSPELLINGS.items():
        assert 1 <= len(wrong) <= 3 and list(wrong) == sorted(wrong) and correct not in wrong
        assert correct.isalpha() and correct.islower() and all(w.isalpha() and w.islower() for w in wrong)
    assert "thier" in MISSPELLINGS["their"] and "beleive" in MISSPELLINGS["believe"]


# -- lowercase, contraction, expansion, extra space (deterministic) ---------------------------------


def test_lowercase() -> None:
    assert lowercase("Hello WORLD, It's Me", rng()) == "hello world, it's me"


def test_contract_needs_a_trailing_space() -> None:
    # One pass, leftmost match first: "It is " (space after) matches "it is" both times; "is not." has no
    # space after it. The match "It is" starts with a capital and is not all capitals: capitalize() -> "It's".
    assert contract("It is not. It is late", rng()) == "It's not. It's late"
    # At the first position "He is " matches "he is" before "is not" can: "He's not"; the final "it is" ends
    # the text (no space after) and stays.
    assert contract("He is not sure it is", rng()) == "He's not sure it is"


def test_contract_rule_order_and_case() -> None:
    # "I would " matches at the start ("I'd"); "would not" would only start later, inside the consumed match.
    assert contract("I would not go", rng()) == "I'd not go"
    # HELM's case rule: "IT IS" holds a space, which is not upper case, so it is not "all capitals":
    # capitalize() -> "It's"; likewise "WE WILL" -> "We'll". "cannot " (one word) -> "can't".
    assert contract("IT IS cold and we cannot stay", rng()) == "It's cold and we can't stay"
    assert contract("WE WILL go", rng()) == "We'll go"
    # "i am" (the space is not lower case either) keeps the map's "i'm" as written.
    assert contract("i am here", rng()) == "i'm here"
    # No rule applies inside a longer word: "bit is " has no word boundary before "it".
    assert contract("a bit is fine", rng()) == "a bit is fine"


def test_expand_keeps_case() -> None:
    # "It's" and "Don't" start with a capital -> capitalize(); "I'M" is not all capitals (the apostrophe is not
    # upper case) -> "I am"; "won't" is not all lower case (the apostrophe again) -> the map's "will not".
    assert expand("It's fine, I'M sure you won't. Don't", rng()) == "It is fine, I am sure you will not. Do not"
    # One pass over the map's contractions in order: "he'd" comes before "he'd've", so "he'd've" -> "he would've";
    # "let's" is not in HELM's map.
    assert expand("can't, he'd, let's, he'd've", rng()) == "cannot, he would, let's, he would've"


def test_expand_of_a_contraction_no_key_spells_follows_helm() -> None:
    # The long s matches "s" case-insensitively, but "ſhe's" lower-cased is no key. HELM's case rule then keeps
    # its None as written, and a None substitute deletes the match; where the rule would change case ("İ'm",
    # capital first) HELM raises, and the text is kept.
    assert expand("ſhe's here", rng()) == " here"
    assert expand("\u0130'm here", rng()) == "\u0130'm here"
    assert contract("ſhe is here", rng()) == "ſhe is here"  # HELM raises on a None contraction: kept


def test_extra_space_multiplies_every_space() -> None:
    # Each of the three spaces becomes two, the double space therefore four.
    assert extra_space("a b  c", rng(), num_spaces=2) == "a  b    c"


# -- misspellings -----------------------------------------------------------------------------------


def test_misspell_at_prob_one_uses_the_table() -> None:
    text = "The receive their because definitely"
    out = misspell(text, rng(1), prob=1.0)
    before, after = text.split(), out.split()
    # HELM's lookup is case-sensitive: the table lists "the", not "The", so "The" is no match and stays.
    assert "the" in MISSPELLINGS and "The" not in MISSPELLINGS and after[0] == "The"
    for word, wrong in zip(before[1:], after[1:], strict=True):
        assert wrong in MISSPELLINGS[word]  # every other word is a key: at prob 1 each becomes a listed misspelling


def test_misspell_uses_helms_one_pattern_over_the_keys(tmp_path: Path) -> None:
    # A user's table in HELM's format: keys with a space and an apostrophe match as written, the earlier key
    # wins where two could match ("about a" before "about"), and case variants match only when listed.
    table = {"about a": ["abotu a"], "isn't": ["isnt"], "About": ["Abuot"], "about": ["abuot"], "a lot": ["alot"]}
    (tmp_path / "correct_to_misspelling.json").write_text(json.dumps(table))
    lists = wordlists.find(tmp_path, "test")
    out = misspell("About a week isn't about a lot, ABOUT", rng(), prob=1.0, word_lists=lists)
    # "About a" is no key (case-sensitive), so "About" matches; "about a" wins over "about"; then "lot" alone.
    assert out == "Abuot a week isnt abotu a lot, ABOUT"


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


def test_typos_lower_case_every_character_first() -> None:
    # HELM lower-cases each character, draws if that is a mapped letter, and upper-cases the result whenever the
    # lower case differed. At prob 0 nothing slips, yet KELVIN SIGN lowers to ASCII "k" and comes back as "K",
    # the title-case "ǅ" comes back as "Ǆ", and "İ" lowers to "i" plus a combining dot, upper-cased in two pieces.
    assert typos("Kelvin\u212a \u01c5 \u0130 \u00df", rng(), prob=0.0) == "KelvinK \u01c4 I\u0307 \u00df"
    # The Kelvin sign draws like a "k": the stream moves by one draw per mapped letter, here 7.
    stream, replay = rng(3), rng(3)
    typos("Kelvin\u212a", stream, prob=0.0)
    for _ in range(7):
        replay.random()
    assert stream.getstate() == replay.getstate()


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
    # HELM splits at single spaces and, at prob 1, puts a filler before every piece, the first and the empty
    # ones included, then joins with single spaces: "a b  c" is the pieces a, b, "", c.
    phrase = "(?:" + "|".join(re.escape(p) for p in FILLERS) + ")"
    assert re.fullmatch(rf"{phrase} a {phrase} b {phrase}  {phrase} c", filler_words("a b  c", rng(4), insert_prob=1.0))
    assert re.fullmatch(rf"{phrase}  {phrase} a {phrase} ", filler_words(" a ", rng(4), insert_prob=1.0))
    assert re.fullmatch(rf"{phrase} ", filler_words("", rng(4), insert_prob=1.0))
    # HELM's preset leaves the speaker phrases out; the draw is over the uncertainty and filler lists, in order.
    preset = next(p for p in PRESETS if p.name == "filler_words")
    speaker = {phrase for category, phrase in rows("filler_words.tsv") if category == "speaker"}
    replay = rng(9)
    expected = [phrase for category, phrase in rows("filler_words.tsv") if category != "speaker"]
    words = []
    for word in ["one", "two", "three", "four"]:
        if replay.random() <= 0.3:
            words.append(replay.choice(expected))
        words.append(word)
    out = preset("one two three four", rng(9))
    assert out == " ".join(words) and not any(phrase in out for phrase in speaker)
    assert filler_words("a b c d", rng(1), insert_prob=1.0, max_num_insert=2).count(" ") >= 5  # two inserted, then none


# -- mild mix ---------------------------------------------------------------------------------------


def test_mild_mix_lowercases_then_contracts() -> None:
    # lowercase: "it is cold. it is late"; contract: "it is " -> "it's " twice. None of it/s/cold/late is in the
    # misspelling table (case-sensitive, lower-case keys), so misspell draws nothing, and space draws one run
    # length per gap: replay those three draws by hand.
    assert not {"it", "s", "cold", "late"} & set(MISSPELLINGS)
    words = ["it's", "cold.", "it's", "late"]
    replay = rng(11)
    expected = words[0] + "".join(" " * replay.randint(1, 3) + word for word in words[1:])
    assert mild_mix("It is COLD. It is late", rng(11)) == expected


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
    from pytest_holistic.perturbations.robustness import load_wordnet
    from pytest_holistic.wordnet_files import wordnet_folder

    wordnet = load_wordnet(wordnet_folder())
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
        "filler_words": {"insert_prob": 0.3, "speaker_ph": False},
        "synonym": {"prob": 0.5},
    }
    for preset in PRESETS:
        assert preset.family == "robustness" and not preset.perturbs_references and "HELM" in preset.source
        assert preset.lists == (("misspellings",) if preset.name.startswith(("misspellings", "mild_mix")) else ())
    mild = next(p for p in PRESETS if p.name == "mild_mix")
    assert "lowercase -> contraction -> misspellings" in mild.source


RUNNABLE = [p for p in PRESETS if p.unavailable() is None]


@pytest.mark.parametrize("preset", RUNNABLE, ids=lambda p: p.name)
@settings(max_examples=40, deadline=None)
@given(text=st.text(), seed=st.integers(0, 2**32))
def test_every_preset_is_deterministic_and_total(preset: Perturbation, text: str, seed: int) -> None:
    out = preset(text, rng(seed))
    assert isinstance(out, str) and out == preset(text, rng(seed))


def _round_trips_off_the_map(char: str) -> bool:
    """Lower-cases to no mapped letter, and HELM's lower-then-upper leaves it as it is."""
    lower = char.lower()
    return lower not in QWERTY and (lower == char or lower.upper() == char)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters().filter(_round_trips_off_the_map)))
def test_typos_leave_text_without_letters_on_the_map_alone(text: str) -> None:
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
    if any(word in MISSPELLINGS for word in re.findall(r"\w+", text)):
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
