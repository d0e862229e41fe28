"""``LegacyRandomState`` gives numpy's legacy ``RandomState`` draws, word for word, for the calls HELM's generators make."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_holistic.scenarios.synthetic._legacy_numpy import LegacyRandomState


@pytest.mark.parametrize("seed", [0, 42, 2**32 - 1])
def test_interleaved_calls_match_numpy(seed: int) -> None:
    ours, theirs = LegacyRandomState(seed), np.random.RandomState(seed)
    words = ["zebra", "cobra", "stork", "penguin", "shark", "lion", "buffalo"] * 3 + ["rat"]
    for step in range(2000):
        kind = step % 6
        if kind == 0:
            assert ours.randint(2, 4) == theirs.randint(2, 4)
        elif kind == 1:
            assert ours.choice(words, 2) == list(theirs.choice(words, size=2))
        elif kind == 2:
            mine, numpys = list(range(step % 9)), list(range(step % 9))
            ours.shuffle(mine)
            theirs.shuffle(numpys)
            assert mine == numpys
        elif kind == 3:
            assert ours.randint(step % 5 + 1) == theirs.randint(step % 5 + 1)  # randint(1) takes no word
        elif kind == 4:
            assert ours.choice(("X", "Y", "Z"), 3) == list(theirs.choice(["X", "Y", "Z"], size=3))
        else:
            assert ours.randint(1000) == theirs.randint(1000)


def test_global_seeding_is_the_same_stream() -> None:
    """HELM's Dyck class seeds numpy's global generator (``np.random.seed``), which seeds as ``RandomState`` does."""
    state = np.random.get_state()
    try:
        np.random.seed(42)
        expected = [int(np.random.randint(3)) for _ in range(50)]
    finally:
        np.random.set_state(state)
    ours = LegacyRandomState(42)
    assert [ours.randint(3) for _ in range(50)] == expected


def test_a_seed_numpy_refuses_is_refused() -> None:
    with pytest.raises(ValueError, match="2\\*\\*32"):
        LegacyRandomState(2**32)
