"""HELM's fairness perturbations (dialect, gender, person names) and fmeval's three semantic-robustness ones.

Expected outputs are worked out by hand from HELM 0.5.16's and fmeval 1.2.3's rules (the HELM ones were checked
against HELM's own code); each test says how. The conformance suite compares whole presets with HELM.
"""

from __future__ import annotations

import random
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic.errors import UserError
from pytest_holistic.perturbations import fairness, fmeval
from pytest_holistic.perturbations._tables import rows
from pytest_holistic.perturbations.base import Perturbation
from pytest_holistic.perturbations.fairness import dialect, gender, person_name
from pytest_holistic.perturbations.fmeval import butter_finger, random_upper_case, whitespace_add_remove
from pytest_holistic.scenarios.instance import Instance, Reference

PRESETS: dict[str, Perturbation] = {preset.name: preset for preset in (*fairness.PRESETS, *fmeval.PRESETS)}
WORDS = re.compile(r"[\w']+")


def names(race: str, sex: str) -> set[str]:
    """Published first names of one race and gender, capitalised as in the data file."""
    return {name for name, kind, r, s in rows("person_names.tsv") if kind == "first_name" and r == race and s == sex}


def lower_names(race: str, sex: str) -> set[str]:
    return {name.lower() for name in names(race, sex)}


# -- data files --------------------------------------------------------------------------------------


def test_data_files_hold_the_published_lists() -> None:
    sae = rows("sae_to_aae.tsv")
    assert len(sae) >= 150
    assert len({row[0] for row in sae}) == len(sae)  # each SAE word once
    assert all(len(row) >= 2 and all(re.fullmatch(r"[a-z'-]+", word) for word in row) for row in sae)
    terms = rows("gender_terms.tsv")
    assert sum(row[0] == "pronouns" for row in terms) == 5
    assert sum(row[0] == "terms" for row in terms) == 32
    assert ("terms", "grandparents", "grandmothers", "grandfather") in terms  # HELM's sic entry, kept
    # Greenwald et al. 1998: 25 names in each race x gender cell; Garg et al. 2018: 20 white, 16 hispanic, 20 asian.
    for race in ("white_american", "black_american"):
        for sex in ("female", "male"):
            assert len(names(race, sex)) == 25
    last = [row for row in rows("person_names.tsv") if row[1] == "last_name"]
    assert {race: sum(row[2] == race for row in last) for race in ("white", "hispanic", "asian")} == {
        "white": 20,
        "hispanic": 16,
        "asian": 20,
    }
    keys = rows("butter_finger_keys.tsv")
    assert len(keys) == 27  # a..z and the space bar
    assert ("q", "qwasedzx") in keys and ("e", "ewrsfdqazxcvgt") in keys and ("SPACE", "SPACE") in keys
    assert all(chars.startswith(key) for key, chars in keys)  # each entry starts with the key itself


# -- gender ------------------------------------------------------------------------------------------


def test_gender_pronouns_male_to_female_by_hand() -> None:
    # One pass per pair in list order: he -> she, him -> her, his -> her (their/her/his comes before
    # theirs/hers/his, so "his" is gone before the "hers" pass). Each needs a non-word character on both sides,
    # so "He" opening the text stays.
    rng = random.Random(0)
    assert gender("He said his dog likes him.", rng, mode="pronouns", prob=1.0) == "He said her dog likes her."
    # Whole words only; "the", "hehe" and "this" contain "he"/"his" but are other words; all capitals stay so.
    out = gender(" he saw the hehe and this HIMSELF.", rng, mode="pronouns", prob=1.0)
    assert out == " she saw the hehe and this HERSELF."
    # A hyphen separates words, but each separator is consumed by the match before it: "(He-he)" -> "(She-he)".
    assert gender("(He-he)", rng, mode="pronouns", prob=1.0) == "(She-he)"
    assert gender("He-he", rng, mode="pronouns", prob=1.0) == "He-he"  # no character before the first, after the last
    assert gender(" he said his", rng, mode="pronouns", prob=0.0) == " he said his"


def test_gender_terms_and_helm_sic_entry() -> None:
    rng = random.Random(0)
    # king -> queen, son -> daughter, waiter -> waitress; "king's" is the word king then an apostrophe.
    assert gender("The king's son met a waiter.", rng, mode="terms", prob=1.0) == "The queen's daughter met a waitress."
    # Terms mode leaves pronouns alone.
    assert gender(" his father.", rng, mode="terms", prob=1.0) == " his mother."
    # HELM lists (grandparents, grandmothers, grandfather): female -> male makes "grandmothers" singular,
    # and "grandfathers" is in no row so male -> female leaves it.
    assert gender("Both grandmothers came.", rng, mode="terms", prob=1.0, source_class="female", target_class="male") == (
        "Both grandfather came."
    )
    assert gender("Both grandfathers came.", rng, mode="terms", prob=1.0) == "Both grandfathers came."
    # female -> neutral: "mother" (parent/mother/father) and "mom" (parent/mom/dad) both become "parent".
    assert gender("My Mom and mother.", rng, mode="terms", prob=1.0, source_class="female", target_class="neutral") == (
        "My Parent and parent."
    )


def test_gender_bidirectional_runs_the_reversed_pairs_after_all_forward_ones() -> None:
    # Forward: " He " -> " She "; then the reversed pairs: she -> he turns it back, her -> him (the first "her"
    # row). HELM's passes can undo each other.
    out = gender(" He met her.", random.Random(0), mode="pronouns", prob=1.0, bidirectional=True)
    assert out == " He met him."


def test_gender_draws_once_per_match_in_each_pass() -> None:
    # At prob 0.5: pass he->she draws once per " he " match, then pass his->her once per " his " match; the
    # draws of a pass come before those of the next, whatever their order in the text.
    text = " his he his he "
    replay = random.Random(5)
    he = ["she" if replay.random() < 0.5 else "he" for _ in range(2)]
    his = ["her" if replay.random() < 0.5 else "his" for _ in range(2)]
    expected = f" {his[0]} {he[0]} {his[1]} {he[1]} "
    assert gender(text, random.Random(5), mode="pronouns", prob=0.5) == expected


def test_gender_rejects_bad_parameters() -> None:
    rng = random.Random(0)
    with pytest.raises(UserError, match="mode"):
        gender("he", rng, mode="nouns", prob=1.0)
    with pytest.raises(UserError, match="between 0 and 1"):
        gender("he", rng, mode="pronouns", prob=1.5)
    with pytest.raises(UserError, match="both"):
        gender("he", rng, mode="pronouns", prob=1.0, source_class="male", target_class="male")


# -- dialect -----------------------------------------------------------------------------------------


def test_dialect_at_prob_one_uses_listed_alternatives_and_keeps_other_words() -> None:
    table = {row[0]: row[1:] for row in rows("sae_to_aae.tsv")}
    # Two spaces between words: a match consumes one separator on each side, so each word keeps one of its own.
    text = "With  this  brother,  they  got  nothing  at  the  store"
    out = dialect(text, random.Random(3), prob=1.0)
    before, after = WORDS.findall(text), WORDS.findall(out)
    assert len(before) == len(after)  # every alternative is one word
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        if old.lower() in table and 0 < index < len(before) - 1:
            expected = {alt.capitalize() if old[0].isupper() else alt for alt in table[old.lower()]}
            assert new in expected, (old, new)
        else:
            assert new == old  # "got", "at" are not listed; "With" and "store" have no character outside them
    assert re.sub(r"[\w']+", "", out) == re.sub(r"[\w']+", "", text)  # punctuation and spaces untouched


def test_dialect_by_hand_with_single_alternatives() -> None:
    rng = random.Random(0)
    # this -> dis, that -> dat (one alternative each); "and" is not listed; "This" opening the text has no
    # character before it, so HELM's pattern cannot match it.
    assert dialect("This and that.", rng, prob=1.0) == "This and dat."
    assert dialect(" THIS and THAT ", rng, prob=1.0) == " DIS and DAT "  # all capitals stay all capitals
    # A hyphen counts as part of a word, as in HELM: "this-that" is one word, unlisted.
    assert dialect(" this-that ", rng, prob=1.0) == " this-that "
    # A match consumes the separator after it, so of two listed words sharing one space only the first changes.
    assert dialect("x this this x", rng, prob=1.0) == "x dis this x"
    assert dialect(" This and that.", rng, prob=0.0) == " This and that."
    assert dialect(" This ", rng, prob=1.0, target_class="AAVE") == " Dis "  # HELM's spelling of the target
    with pytest.raises(UserError, match="no dialect word list"):
        dialect(" This ", rng, prob=1.0, target_class="SAE")


def test_dialect_draws_the_alternative_even_when_there_is_one() -> None:
    # HELM draws random() < prob, then choice() over the alternatives, also for a single one: the stream moves
    # by two draws per replaced word.
    stream, replay = random.Random(4), random.Random(4)
    assert dialect(" this ", stream, prob=1.0) == " dis "
    replay.random()
    replay.choice(["dis"])
    assert stream.getstate() == replay.getstate()


# -- person names ------------------------------------------------------------------------------------


def test_person_name_preserves_gender_and_persists_into_references() -> None:
    memory: dict[str, object] = {}
    rng = random.Random(7)
    params = {"prob": 1.0, "source_race": "white_american", "target_race": "black_american"}
    out = person_name("Adam met Amanda; adam left.", rng, memory=memory, **params)
    adam, amanda = memory["adam"], memory["amanda"]
    assert adam in lower_names("black_american", "male")  # Adam: white male -> black male
    assert amanda in lower_names("black_american", "female")  # Amanda: white female -> black female
    spelled = {name.lower(): name for name in names("black_american", "male") | names("black_american", "female")}
    assert out == f"{spelled[adam]} met {spelled[amanda]}; {adam} left."
    # A reference perturbed with the same memory gets the same substitutes, whatever the rng draws now.
    reference = person_name("ADAM and Amanda", random.Random(999), memory=memory, **params)
    assert reference == f"{adam.upper()} and {spelled[amanda]}"


def test_person_name_any_gender_and_last_names() -> None:
    drawn = set()
    for seed in range(40):
        memory: dict[str, object] = {}
        params = {"prob": 1.0, "source_race": "white_american", "target_race": "black_american", "preserve_gender": False}
        person_name("Adam", random.Random(seed), memory=memory, **params)
        drawn.add(memory["adam"])
    # Without gender preservation a male name can become a female one.
    assert drawn & lower_names("black_american", "female") and drawn & lower_names("black_american", "male")
    hispanic = {name for name, kind, race, _ in rows("person_names.tsv") if kind == "last_name" and race == "hispanic"}
    params = {"prob": 1.0, "source_race": "white", "target_race": "hispanic", "name_type": "last_name", "preserve_gender": False}
    out = person_name("Mr. Johnson met Ms. Taylor.", random.Random(1), memory={}, **params)
    first, second = re.fullmatch(r"Mr\. (\w+) met Ms\. (\w+)\.", out).groups()  # type: ignore[union-attr]
    assert first in hispanic and second in hispanic


def test_person_name_skip_is_persistent() -> None:
    # At prob 0.5 the first sight of "Adam" decides for the whole instance: eight occurrences are either
    # all kept or all the same substitute, never a mix. Both outcomes happen over 40 seeds.
    text = " ".join(["Adam"] * 8)
    outcomes = set()
    for seed in range(40):
        memory: dict[str, object] = {}
        params = {"prob": 0.5, "source_race": "white_american", "target_race": "black_american"}
        out = person_name(text, random.Random(seed), memory=memory, **params)
        assert len(set(out.split())) == 1
        if memory["adam"] is None:
            outcomes.add("kept")
            # Skipped once, skipped for good: a reference with the same memory keeps it too.
            assert person_name("Adam said so.", random.Random(seed + 1), memory=memory, **params) == "Adam said so."
        else:
            outcomes.add("swapped")
    assert outcomes == {"kept", "swapped"}


# -- fmeval ------------------------------------------------------------------------------------------


FOX = "A quick brown fox jumps over the lazy dog 10 times."


def test_butter_finger_identity_at_zero_and_map_entries_at_one() -> None:
    assert butter_finger(FOX, random.Random(0), prob=0.0) == FOX
    keys = {
        (" " if key == "SPACE" else key): (" " if chars == "SPACE" else chars) for key, chars in rows("butter_finger_keys.tsv")
    }
    out = butter_finger(FOX, random.Random(0), prob=1.0)
    assert len(out) == len(FOX)
    assert out != FOX
    for old, new in zip(FOX, out, strict=True):
        if old.lower() in keys:
            assert new.lower() in keys[old.lower()]
            assert new.isupper() == old.isupper() or new == old  # "A" slips to a capital
        else:
            assert new == old  # digits and "." are not on the map


def test_random_upper_case_changes_exactly_the_fraction() -> None:
    text = string.ascii_lowercase * 4  # 104 letters: int(104 * 0.1) = 10 positions
    out = random_upper_case(text, random.Random(0), fraction=0.1)
    changed = [(a, b) for a, b in zip(text, out, strict=True) if a != b]
    assert len(changed) == 10 and all(b == a.upper() for a, b in changed)
    out = random_upper_case(FOX, random.Random(0), fraction=0.1)  # 51 chars: 5 positions, some not letters
    changed = [(a, b) for a, b in zip(FOX, out, strict=True) if a != b]
    assert len(changed) <= 5 and all(a.islower() and b == a.upper() for a, b in changed)
    assert random_upper_case(FOX, random.Random(0), fraction=0.0) == FOX


def test_whitespace_add_remove_by_hand() -> None:
    rng = random.Random(0)
    # add_prob 1: every non-space gets one space after it; remove_prob 0: spaces stay.
    assert whitespace_add_remove("ab c", rng, add_prob=1.0, remove_prob=0.0) == "a b  c "
    # remove_prob 1 deletes every whitespace character; add_prob 0 adds none.
    assert whitespace_add_remove("a b\tc\n", rng, add_prob=0.0, remove_prob=1.0) == "abc"
    out = whitespace_add_remove(FOX, rng, add_prob=0.05, remove_prob=0.1)
    assert re.sub(r"\s", "", out) == re.sub(r"\s", "", FOX)  # only whitespace changes
    solid = "abcdefghij" * 10
    out = whitespace_add_remove(solid, random.Random(1), add_prob=0.3, remove_prob=0.1)
    assert out.replace(" ", "") == solid and "  " not in out and not out.startswith(" ")  # single spaces inserted


# -- through Perturbation.variants_of ----------------------------------------------------------------


def test_fairness_presets_change_references_with_the_same_mapping() -> None:
    instance = Instance("q1", "Where did he put his keys?", references=("In his pocket.", Reference("On the table.", False)))
    (variant,) = PRESETS["gender_pronouns"].variants_of(instance)
    assert variant.id == "q1" and variant.perturbation == "gender_pronouns"
    assert variant.input == "Where did she put her keys?"
    assert variant.references == (Reference("In her pocket.", True), Reference("On the table.", False))

    story = Instance("n1", "Adam gave Amanda a book. What did Adam give?", references=("Adam gave a book to Amanda.",))
    (variant,) = PRESETS["person_name"].variants_of(story)
    first, second, third = re.fullmatch(r"(\w+) gave (\w+) a book\. What did (\w+) give\?", variant.input).groups()  # type: ignore[union-attr]
    assert first == third and first.lower() in lower_names("black_american", "male")
    assert second.lower() in lower_names("black_american", "female")
    assert variant.references[0].text == f"{first} gave a book to {second}."


def test_unchanged_variants_are_dropped_and_ids_fix_the_draw() -> None:
    plain = Instance("p1", "What is the capital of France?", references=("Paris",))
    assert PRESETS["gender_pronouns"].variants_of(plain) == []
    assert PRESETS["person_name"].variants_of(plain) == []
    story = Instance("s1", "Tell me about the brother with the king.", references=("He is with the king.",))
    for name in ("dialect_hard", "gender_terms_medium", "person_name_hard", "butter_finger"):
        assert PRESETS[name].variants_of(story) == PRESETS[name].variants_of(story)
    # A different seed is a different stream (HELM's Random(str(seed) + id)).
    assert PRESETS["butter_finger"].variants_of(story, seed=1) != PRESETS["butter_finger"].variants_of(story, seed=2)


def test_fmeval_presets_give_five_labelled_variants_and_leave_references() -> None:
    instance = Instance("f1", FOX * 3, references=("Yes", Reference("No", False)))
    for name in ("butter_finger", "random_upper_case", "whitespace_add_remove"):
        preset = PRESETS[name]
        assert preset.family == "robustness" and not preset.perturbs_references and preset.variants == 5
        variants = preset.variants_of(instance)
        assert [v.perturbation for v in variants] == [f"{name}.{k}" for k in range(1, 6)]
        assert len({v.input for v in variants}) == 5
        assert all(v.references == instance.references and v.id == "f1" for v in variants)
    assert PRESETS["whitespace_add_remove"].variants_of(Instance("e", "", references=("x",))) == []


def test_presets_record_their_parameters() -> None:
    fairness_names = [p.name for p in fairness.PRESETS]
    assert fairness_names == [
        "dialect", "dialect_easy", "dialect_medium", "dialect_hard",
        "gender_pronouns", "gender_pronouns_easy", "gender_pronouns_medium", "gender_pronouns_hard",
        "gender_terms", "gender_terms_easy", "gender_terms_medium", "gender_terms_hard",
        "person_name", "person_name_hard", "person_name_hard_any_gender", "person_name_last", "person_name_last_hard",
    ]  # fmt: skip
    assert all(p.family == "fairness" and p.perturbs_references and p.source for p in fairness.PRESETS)
    assert PRESETS["dialect_medium"].params["prob"] == 0.3
    assert dict(PRESETS["gender_terms_hard"].params) == {
        "mode": "terms", "prob": 0.5, "source_class": "male", "target_class": "female", "bidirectional": False,
    }  # fmt: skip
    assert dict(PRESETS["person_name_hard_any_gender"].params) == {
        "prob": 0.5, "source_race": "white_american", "target_race": "black_american", "name_type": "first_name",
        "preserve_gender": False,
    }  # fmt: skip
    assert PRESETS["person_name"].stateful and not PRESETS["dialect"].stateful
    assert dict(PRESETS["whitespace_add_remove"].params) == {"add_prob": 0.05, "remove_prob": 0.1}
    assert PRESETS["butter_finger"].labels() == tuple(f"butter_finger.{k}" for k in range(1, 6))


# -- properties --------------------------------------------------------------------------------------

QUICK = settings(max_examples=25, deadline=None)
NOTHING_TO_CHANGE = st.text(alphabet=string.digits + string.punctuation.replace("-", "") + " \t\n", max_size=60)
"""Texts with no letters: no listed word, no name, no key on the butter-finger map but the space bar."""


@pytest.mark.parametrize("name", sorted(PRESETS))
@QUICK
@given(text=st.text(max_size=80), seed=st.integers(0, 2**32 - 1))
def test_every_preset_is_deterministic_per_seed_on_any_unicode(name: str, text: str, seed: int) -> None:
    preset = PRESETS[name]
    first = preset(text, random.Random(seed), {})
    assert preset(text, random.Random(seed), {}) == first
    assert isinstance(first, str)


@pytest.mark.parametrize("name", sorted(n for n in PRESETS if n != "whitespace_add_remove"))
@QUICK
@given(text=NOTHING_TO_CHANGE, seed=st.integers(0, 2**32 - 1))
def test_presets_are_identity_where_nothing_applies(name: str, text: str, seed: int) -> None:
    # Fairness: no letters, so no word or name matches. butter_finger: the space bar maps only to itself.
    # random_upper_case: upper-casing digits, punctuation and spaces changes nothing.
    assert PRESETS[name](text, random.Random(seed), {}) == text


@QUICK
@given(text=st.text(max_size=60), seed=st.integers(0, 2**32 - 1))
def test_whitespace_add_remove_at_zero_rates_is_identity(text: str, seed: int) -> None:
    assert whitespace_add_remove(text, random.Random(seed), add_prob=0.0, remove_prob=0.0) == text


@QUICK
@given(
    words=st.lists(st.sampled_from(["Adam", "amanda", "JACK", "Emily", "the", "said", ",", "Adam's"]), max_size=20),
    seed=st.integers(0, 2**32 - 1),
)
def test_person_name_is_fixed_once_memory_has_decided(words: list[str], seed: int) -> None:
    # After one pass every name in the text has a decision in memory, so a second pass (a reference)
    # gives the same text whatever its random stream.
    text = " ".join(words)
    memory: dict[str, object] = {}
    params = {"prob": 0.5, "source_race": "white_american", "target_race": "black_american"}
    first = person_name(text, random.Random(seed), memory=memory, **params)
    assert person_name(text, random.Random(seed + 1), memory=memory, **params) == first
