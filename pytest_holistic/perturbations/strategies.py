"""The perturbations as Hypothesis strategies: the exploratory mode of seeds digest §3.6.

The deterministic mode (one variant per instance from ``random.Random(instance.id)``) is what the plugin
runs and what HELM reports. This module is the other mode, for property tests a user writes against a
model: Hypothesis draws each perturbation's rate and random seed, then which of the resulting word-level
changes to keep. Every draw shrinks toward less change (the lowest rate on the ladder, seed 0, hunks
switched off), so a failing property is reported with the fewest changed words that still break it, and
the printed blob replays it. Only users' tests import this module; the plugin never does at start-up.

    from hypothesis import given
    from pytest_holistic.perturbations.strategies import holistic_settings, typos

    @given(text=typos(of="Is the sky blue?"))
    @holistic_settings
    def test_typos_keep_the_answer(model, text):
        assert model.answer(text) == model.answer("Is the sky blue?")
"""

from __future__ import annotations

import inspect
import os
import random
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, assume, currently_in_test_context, note, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ..errors import UserError
from .base import Perturbation
from .catalog import get
from .diff import apply_hunks, describe_hunks, hunks, tokens
from .fairness import check_rate

RATE_LADDER: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.5)
"""The rates drawn for a parameter that is not fixed, smallest first because ``sampled_from`` shrinks to the first."""

SEED_MAX = 2**32 - 1
BITS = 64
"""Hunks per drawn keep-mask integer: Hypothesis shrinks a 64-bit one to its fewest set bits, a 400-bit one not."""

holistic_settings = settings(
    deadline=None,
    max_examples=50,
    derandomize="CI" in os.environ,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
    print_blob=True,
)
"""Settings for properties checked against a model: a model call has no useful deadline and is slow, so the
search is bounded to 50 examples, and on CI (``CI`` set) the draws are derandomised so a rerun fails the same
way. Use it as a decorator, or select it with ``--hypothesis-profile holistic``; it is never loaded globally."""

settings.register_profile("holistic", holistic_settings)


def _is_rate_name(name: str) -> bool:
    """Whether a parameter is a probability or fraction (``prob``, ``insert_prob``, ``fraction``...)."""
    return name == "prob" or name.endswith(("_prob", "fraction"))


def _is_rate(name: str, value: Any) -> bool:
    """A rate parameter whose preset value is a usable rate, so worth drawing."""
    named = _is_rate_name(name)
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    return named and numeric and 0 < value <= 1


def _accepts(perturbation: Perturbation, name: str) -> bool:
    """Whether ``name`` can be fixed: a preset parameter or a keyword the transform takes."""
    if name in perturbation.params:
        return True
    try:
        parameters = inspect.signature(perturbation.transform).parameters
    except (TypeError, ValueError):
        return True
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return True
    return name in parameters and name not in ("text", "rng", "memory", "word_lists")


def perturbed(perturbation: Perturbation | str, *, of: str, **fixed_params: Any) -> SearchStrategy[str]:
    """Texts that differ from ``of`` by some of the changes one draw of ``perturbation`` makes.

    Rate parameters not given in ``fixed_params`` are drawn from ``RATE_LADDER`` (plus the preset's own
    value), the seed from ``0..SEED_MAX``, then a keep-flag per word-level hunk (``diff.hunks``); a draw
    that keeps no change is rejected. Misuse (a perturbation that cannot run here, one that rewrites whole
    instances, an unknown parameter) is a UserError when the strategy is built, not a failure at draw time.

        @given(text=perturbed("typos", of="Is the sky blue?", prob=0.3))
    """
    if not isinstance(of, str):
        raise UserError(f"of= must be the text to perturb, got {type(of).__name__}")
    preset = get(perturbation) if isinstance(perturbation, str) else perturbation
    if preset.instance_transform is not None:
        raise UserError(f"perturbation {preset.name!r} rewrites whole instances, so it has no strategy over a text")
    reason = preset.unavailable()
    if reason is not None:
        raise UserError(f"perturbation {preset.name!r} cannot run here: {reason}")
    unknown = sorted(name for name in fixed_params if not _accepts(preset, name))
    if unknown:
        known = ", ".join(sorted(preset.params)) or "none"
        raise UserError(f"perturbation {preset.name!r} has no parameter {', '.join(unknown)}; its parameters: {known}")
    for name, value in fixed_params.items():
        if _is_rate_name(name):
            check_rate(name, value)
            if value == 0:
                raise UserError(
                    f"perturbation {preset.name!r}: {name}=0 changes nothing, so no example could be drawn; "
                    f"give a rate above 0 or leave {name} out to draw it"
                )
    ladders = {
        name: st.sampled_from(sorted({*RATE_LADDER, float(value)}))
        for name, value in preset.params.items()
        if name not in fixed_params and _is_rate(name, value)
    }
    base = {**preset.params, **fixed_params}
    return _draw(preset, of, base, ladders)


@st.composite
def _draw(
    draw: st.DrawFn,
    preset: Perturbation,
    of: str,
    base: dict[str, Any],
    ladders: dict[str, SearchStrategy[float]],
) -> str:
    params = {**base, **{name: draw(ladder) for name, ladder in ladders.items()}}
    seed = draw(st.integers(0, SEED_MAX))
    full = replace(preset, params=params)(of, random.Random(seed), {})
    found = hunks(of, full)
    keep = _keep(draw, len(found), 2 * len(tokens(of)) + 1)
    text = apply_hunks(of, found, keep)
    assume(text != of)  # unlike .filter's redraw, rejecting the case lets the shrinker switch hunks off freely
    if currently_in_test_context():
        kept = [hunk for hunk, flag in zip(found, keep) if flag]
        note(f"{preset.name} params={params} seed={seed}: {describe_hunks(kept)}")
    return text


def _keep(draw: st.DrawFn, found: int, most: int) -> list[bool]:
    """A keep-flag for each of the ``found`` hunks: the bits of one integer per ``BITS`` hunks ``of`` could have.

    Integers, not a list of booleans: the shrinker takes an integer to its fewest set bits, and the number
    of draws depends on ``of`` alone (at most a hunk per token and an insertion beside each), never on the
    seed. With one boolean per hunk found, a seed making fewer hunks looked simpler than keeping fewer of
    them, and shrinking a property that breaks on any change stopped at three to five hunks instead of one.
    """
    keep: list[bool] = []
    for start in range(0, most, BITS):
        width = max(0, min(BITS, found - start))
        bits = draw(st.integers(0, 2**width - 1))
        keep.extend(bool(bits >> i & 1) for i in range(width))
    return keep


def typos(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Keyboard-neighbour typos (HELM ``typos``): does a slip of the finger change the answer?

    @given(text=typos(of="Is the sky blue?"))
    @holistic_settings
    def test_typos_keep_the_answer(text): ...
    """
    return perturbed("typos", of=of, **params)


def lowercase(*, of: str, **params: Any) -> SearchStrategy[str]:
    """The text lower-cased (HELM ``lowercase``); the hunks let shrinking keep a single lowered word."""
    return perturbed("lowercase", of=of, **params)


def contractions(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Expansions contracted, "it is" to "it's" (HELM ``contraction``)."""
    return perturbed("contraction", of=of, **params)


def expansions(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Contractions expanded, "won't" to "will not" (HELM ``expansion``)."""
    return perturbed("expansion", of=of, **params)


def misspellings(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Common human misspellings from Wikipedia's list (HELM ``misspellings``)."""
    return perturbed("misspellings", of=of, **params)


def spaces(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Whitespace between words replaced by other runs of spaces (HELM ``space``)."""
    return perturbed("space", of=of, **params)


def extra_spaces(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Extra spaces inserted between words (HELM ``extra_space``)."""
    return perturbed("extra_space", of=of, **params)


def filler_words(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Hedges and fillers such as "uhm" inserted between words (HELM ``filler_words``)."""
    return perturbed("filler_words", of=of, **params)


def synonyms(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Words replaced by WordNet synonyms (HELM ``synonym``); a UserError if WordNet or spaCy is missing."""
    return perturbed("synonym", of=of, **params)


def mild_mixes(*, of: str, **params: Any) -> SearchStrategy[str]:
    """HELM's robustness mix (lowercase, then contractions, misspellings and spaces) in one draw."""
    return perturbed("mild_mix", of=of, **params)


def dialects(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Standard American English rewritten toward African American English (HELM ``dialect``)."""
    return perturbed("dialect", of=of, **params)


def genders(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Gendered pronouns or gendered terms swapped (HELM ``gender_pronouns`` or ``gender_terms``)."""
    return perturbed("gender_pronouns", of=of, **params) | perturbed("gender_terms", of=of, **params)


def names(*, of: str, **params: Any) -> SearchStrategy[str]:
    """First names swapped across race, keeping gender (HELM ``person_name``)."""
    return perturbed("person_name", of=of, **params)


def butter_fingers(*, of: str, **params: Any) -> SearchStrategy[str]:
    """fmeval's ButterFinger typos, whose key map may also leave a letter as it was."""
    return perturbed("butter_finger", of=of, **params)


def random_upper_cases(*, of: str, **params: Any) -> SearchStrategy[str]:
    """A fraction of the characters upper-cased at random (fmeval ``random_upper_case``)."""
    return perturbed("random_upper_case", of=of, **params)


def whitespace_changes(*, of: str, **params: Any) -> SearchStrategy[str]:
    """Spaces added after characters and removed between words (fmeval ``whitespace_add_remove``)."""
    return perturbed("whitespace_add_remove", of=of, **params)
