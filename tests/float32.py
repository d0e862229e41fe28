"""How far two float32 computations of one log-probability may lie apart, and why: the tests' one statement of it.

The backend scores in batches (padded, prefix-shared, packed into token trees) where the tests' references score one
sequence at a time, and torch's kernel family (default, AVX2, AVX-512: what another CPU runs) orders the same sums
differently again. Each token's log-probability then moves by a few float32 roundings of its logits' scale. Measured
over the three kernel families: at most 3.9e-6 per token on the tests' tiny GPT-2, T5 and BART (every batch size,
strategy and sharing mode of tests/models), 2.0e-6 on the conformance runner's model. ``TOKEN_DRIFT`` (1e-5) leaves a
factor of 2.5 over the worst of them, and a log-probability summed over n tokens adds n such moves, so a fixed
tolerance (once 1e-5) fails on a long enough answer: BART's 7-token ``" Rome. The sky is blue."`` moved by 1.01e-5
under torch's default kernels.
"""

from __future__ import annotations

TOKEN_DRIFT = 1e-5
"""The most one token's float32 log-probability may move between two computations (measured: 3.9e-6 at most)."""


def sum_tolerance(tokens: int) -> float:
    """How far a log-probability summed over ``tokens`` token values may move (at least one token's drift)."""
    return TOKEN_DRIFT * max(1, tokens)
