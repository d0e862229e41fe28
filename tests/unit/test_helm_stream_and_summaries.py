"""HELM's one-stream draws (``helm_stream``) and its summarisation rows (``helm_summarization``)."""

from __future__ import annotations

import random

from pytest_holistic.scenarios import Instance, Reference
from pytest_holistic.scenarios.helm_stream import active, helm_stream
from pytest_holistic.scenarios.helm_summarization import TrainFilter, clean, summarization_row
from pytest_holistic.scenarios.loaders import GeneratorSource


def drawing_source(draws: list[int]) -> GeneratorSource:
    """A source whose rows each draw one number from the active stream, as HELM's row loops do."""

    def rows() -> list[Instance]:
        found = []
        for k in range(3):
            stream = active()
            assert stream is not None
            draws.append(stream.random.randint(0, 1000))
            found.append(Instance(f"r{k}", f"row {stream.next_position()}"))
        return found

    return GeneratorSource(rows)


def test_every_load_draws_from_a_fresh_seeded_stream_in_row_order() -> None:
    draws: list[int] = []
    source = helm_stream(drawing_source(draws), seed=0)
    first = [instance.input for instance in source()]
    second = [instance.input for instance in source()]
    expected = random.Random(0)
    assert draws == [expected.randint(0, 1000) for _ in range(3)] * 2  # HELM's random.seed(0), then one draw per row
    assert first == second == ["row 0", "row 1", "row 2"]
    assert active() is None  # the stream ends with the read


def test_texts_are_cleaned_and_the_article_cut_as_helm_does() -> None:
    row = {"document": "One\ntwo   three " + "w " * 600, "summary": " A\nsummary ", "id": "1"}
    got = summarization_row("document", "summary", row)
    assert got["summary"] == "A summary" and got["id"] == "1"
    assert got["document"].startswith("One two three w") and len(got["document"].split()) == 512
    assert clean("a\n\nb  c", 2) == "a b"


def test_the_train_filter_keeps_what_helm_keeps() -> None:
    def train(words: int, summary: str = "a short summary of eleven words that HELM keeps as examples") -> Instance:
        return Instance("x", " ".join(["w"] * words), (Reference(summary),), split="train")

    xsum = TrainFilter(xsum=True)
    assert not xsum.keeps(train(49)) and xsum.keeps(train(55)) and xsum.keeps(train(150)) and not xsum.keeps(train(151))
    assert not xsum.keeps(train(54))  # 11 summary words / 54 > 0.2
    assert not xsum.keeps(train(60, "ten words is not enough for a summary here ok"))  # <= 10 words
    assert not xsum.keeps(
        Instance(
            "n", "Last updated at " + "w " * 60, ("a short summary of eleven words that HELM keeps as examples",), split="train"
        )
    )
    assert TrainFilter().keeps(train(50, "short"))  # CNN/DM: lengths only
    assert xsum.keeps(Instance("t", "a test article of any length", ("s",), split="test"))
