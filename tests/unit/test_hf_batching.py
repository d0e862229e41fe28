"""The transformers batching core (``models.hf_batching``) on fake step functions: no model is loaded."""

from __future__ import annotations

import math

import pytest

from pytest_holistic.errors import ModelOutputError
from pytest_holistic.models import hf_batching

torch = pytest.importorskip("torch")


class _Device:
    """A step function on a device that holds at most ``fits`` items at once."""

    def __init__(self, fits: int) -> None:
        self.fits = fits
        self.seen: list[list[int]] = []

    def run(self, batch: list[int]) -> list[int]:
        self.seen.append(batch)
        if len(batch) > self.fits:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [item * 10 for item in batch]


def _halving(items: list[int], rows: int, device: _Device) -> tuple[list[tuple[list[int], list[int]]], list[int]]:
    size = [rows]
    shrunk: list[int] = []

    def shrink(failed: int, error: BaseException) -> None:
        size[0] = hf_batching.halved(failed, error, model="m", unit="row", fix="use fewer rows")
        shrunk.append(size[0])

    batches = hf_batching.halving_batches(len(items), lambda start: items[start : start + size[0]], device.run, shrink)
    return list(batches), shrunk


def test_a_batch_that_runs_out_of_memory_is_halved_and_no_item_is_lost_or_repeated() -> None:
    device = _Device(fits=2)
    batches, shrunk = _halving(list(range(7)), 8, device)
    # 7 fails, half of it (3) fails too, half of that (1) fits and is kept for the rest.
    assert [len(batch) for batch in device.seen] == [7, 3] + [1] * 7
    assert shrunk == [3, 1]
    assert [item for batch, _ in batches for item in batch] == list(range(7))
    assert [out for _, output in batches for out in output] == [item * 10 for item in range(7)]


def test_the_smaller_size_is_kept_once_a_batch_fits() -> None:
    device = _Device(fits=4)
    batches, shrunk = _halving(list(range(10)), 8, device)
    assert shrunk == [4]
    assert [len(batch) for batch, _ in batches] == [4, 4, 2]


def test_one_item_that_does_not_fit_is_a_one_line_error() -> None:
    with pytest.raises(ModelOutputError, match=r"model 'm' ran out of device memory on a single row \(CUDA out of memory"):
        _halving([1, 2, 3], 4, _Device(fits=0))


def test_an_error_that_is_not_out_of_memory_is_raised_as_it_is() -> None:
    def run(batch: list[int]) -> None:
        raise ValueError("broken")

    def shrink(size: int, error: BaseException) -> None:
        raise AssertionError("not an out-of-memory error")

    with pytest.raises(ValueError, match="broken"):
        list(hf_batching.halving_batches(3, lambda start: [start], run, shrink))


def test_out_of_memory_is_cuda_s_error_or_another_device_s_runtime_error() -> None:
    assert hf_batching.is_out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory"))
    assert hf_batching.is_out_of_memory(RuntimeError("MPS backend out of memory"))
    assert not hf_batching.is_out_of_memory(RuntimeError("shape mismatch"))
    assert not hf_batching.is_out_of_memory(ValueError("out of memory"))


def test_the_next_batch_is_the_longest_run_within_the_rows_and_the_token_budget() -> None:
    lengths = [9, 7, 7, 5, 3, 3, 2, 1]

    def padded(run: list[int] | tuple[int, ...]) -> int:
        return len(run) * max(run)  # rows times the longest row, as a padded batch costs

    for start in range(len(lengths)):
        for rows in (1, 3, 8):
            for budget in (None, 1, 14, 20, 30):
                got = hf_batching.next_batch(lengths, start, rows, budget, padded)
                limit = min(len(lengths), start + rows)
                ends = [end for end in range(start + 1, limit + 1) if budget is None or padded(lengths[start:end]) <= budget]
                assert got == lengths[start : max(ends, default=start + 1)]


def test_requests_are_sorted_longest_first_and_contexts_grouped() -> None:
    assert hf_batching.longest_first([0, 1, 2, 3], lambda i: [2, 5, 5, 1][i]) == [1, 2, 0, 3]
    pairs = [([1, 2], [3], 0), ([1, 2], [3, 4, 5], 0), ([7], [8], 0), ([1, 2, 3], [4], 0)]
    groups, contexts = hf_batching.contexts_longest_first(pairs, range(4))
    assert contexts == [(1, 2), (1, 2, 3), (7,)]  # 2 + 3 continuation tokens, then 3 + 1, then 1 + 1
    assert groups[(1, 2)] == [0, 1]


def _decode(tokens: list[int]) -> str:
    return "".join(chr(token) for token in tokens).replace("\x00", "")  # 0 is a special token: no text


def test_a_generation_is_cut_at_the_first_stop_and_keeps_the_tokens_that_reach_it() -> None:
    tokens = [ord(c) for c in "ab\ncd"]
    assert hf_batching.cut_at_stop(_decode, tokens, ("\n",)) == ("ab", 2)
    assert hf_batching.cut_at_stop(_decode, tokens, ("d", "c")) == ("ab\n", 3)
    assert hf_batching.cut_at_stop(_decode, tokens, ("",)) == ("ab\ncd", 5)
    assert hf_batching.cut_at_stop(_decode, [ord("\n")], ("\n",)) == ("", 1)  # at least one token, if any


def test_generation_results_cut_at_the_end_token_and_fail_on_nan() -> None:
    end = 0
    new = [[ord("a"), ord("b"), end, ord("c")], [ord("x"), ord("\n"), ord("y")]]
    logprobs = [[-0.1, -0.2, -0.3, -0.4], [-1.0, -2.0, -3.0]]
    results = hf_batching.generation_results([4, 5], new, logprobs, ("\n",), 0.5, eos_id=end, decode=_decode, model="m")
    assert [(r.text, r.token_logprobs, r.tokens_in) for r in results] == [("ab", (-0.1, -0.2), 4), ("x", (-1.0,), 5)]
    assert all(r.logprobs_returned and r.seconds == 0.5 for r in results)
    with pytest.raises(ModelOutputError, match="model 'm' returned NaN log-probabilities"):
        hf_batching.generation_results([1], [[end]], [[math.nan]], (), 0.0, eos_id=end, decode=_decode, model="m")
