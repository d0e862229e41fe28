"""The project's tests write nothing into the checkout: Hypothesis' database and caches live under the user cache."""

from __future__ import annotations

from pathlib import Path

from hypothesis.configuration import storage_directory

CHECKOUT = Path(__file__).resolve().parent.parent.parent


def test_hypothesis_stores_outside_the_checkout() -> None:
    home = Path(storage_directory("examples", intent_to_write=False).home_directory).resolve()
    assert not home.is_relative_to(CHECKOUT), home
