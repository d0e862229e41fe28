"""Toxicity: HELM's aggregates by hand, the offline profanity scorer, a Hugging Face classifier built
in-test, and the Perspective backend against a local HTTP server (its key must never leak)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib import metadata
from pathlib import Path
from typing import ClassVar

import pytest

from pytest_holistic.errors import UserError
from pytest_holistic.metrics import (
    POPULATION,
    MetricInputError,
    ScorerError,
    ScorerUnavailable,
    ToxicityScorer,
    expected_max_toxicity,
    max_toxicity,
    max_toxicity_probability,
    mean_toxicity,
    toxic_fraction,
)
from pytest_holistic.metrics.toxicity_scorers import HFToxicityScorer, PerspectiveScorer, ProfanityScorer

SECRET = "sk-test-0123456789-never-print-me"

# -- aggregates -------------------------------------------------------------------------------------


def test_aggregates_hand_computed() -> None:
    scores = [0.1, 0.5, 0.7, 0.2]
    assert mean_toxicity(scores) == pytest.approx(0.375)  # 1.5 / 4
    # HELM compares with >=: 0.5 and 0.7 are toxic -> 2/4
    assert toxic_fraction(scores) == 0.5
    assert toxic_fraction(scores, threshold=0.6) == 0.25
    assert max_toxicity(scores) == 0.7
    per_instance = [[0.1, 0.6], [0.3, 0.2]]
    # maxima 0.6 and 0.3 -> mean 0.45; one of two instances reaches 0.5 -> 0.5
    assert expected_max_toxicity(per_instance) == pytest.approx(0.45)
    assert max_toxicity_probability(per_instance) == 0.5
    assert POPULATION["toxic_frac"].function is toxic_fraction


@pytest.mark.parametrize("call", [lambda: mean_toxicity([]), lambda: max_toxicity([1.2]), lambda: expected_max_toxicity([[]])])
def test_aggregate_input_errors(call) -> None:
    with pytest.raises(MetricInputError):
        call()


# -- offline default --------------------------------------------------------------------------------


def test_profanity_scorer_separates_profane_from_neutral() -> None:
    scorer = ProfanityScorer()
    assert isinstance(scorer, ToxicityScorer)
    profane, neutral, blank = scorer.score(["You are a fucking idiot, shut the fuck up.", "The library opens at nine.", "  "])
    assert profane > 0.5
    assert neutral < 0.5
    assert blank == 0.0  # blank texts are not sent to the classifier
    assert scorer.score([]) == []
    assert scorer.name == "alt-profanity-check (profanity classifier)"
    assert scorer.version == metadata.version("alt-profanity-check")  # what is installed, read at run time
    assert scorer.to_dict() == {"name": scorer.name, "version": scorer.version}


# -- Perspective API --------------------------------------------------------------------------------


def test_missing_perspective_key_is_a_one_line_skip_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PERSPECTIVE_API_KEY", raising=False)
    with pytest.raises(ScorerUnavailable) as raised:
        PerspectiveScorer()
    message = str(raised.value)
    assert "PERSPECTIVE_API_KEY" in message
    assert "\n" not in message
    monkeypatch.setenv("PERSPECTIVE_API_KEY", "   ")
    with pytest.raises(ScorerUnavailable):
        PerspectiveScorer()


class _FakePerspective(BaseHTTPRequestHandler):
    """A local stand-in for the Perspective endpoint: scores "bad" 0.9, anything else 0.1."""

    seen: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append({"path": self.path, "key": self.headers.get("x-goog-api-key"), "body": body})
        if self.headers.get("x-goog-api-key") != SECRET:
            self._answer(403, {"error": {"message": "API key not valid."}})
            return
        value = 0.9 if "bad" in body["comment"]["text"] else 0.1
        self._answer(200, {"attributeScores": {"TOXICITY": {"summaryScore": {"value": value, "type": "PROBABILITY"}}}})

    def _answer(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def perspective_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _FakePerspective)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    _FakePerspective.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1alpha1/comments:analyze"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_perspective_scores_through_the_api_and_sends_the_key_only_in_a_header(
    perspective_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERSPECTIVE_API_KEY", SECRET)
    scorer = PerspectiveScorer(endpoint=perspective_server, qps=1000)
    assert scorer.score(["a bad thing", "", "a fine thing"]) == [0.9, 0.0, 0.1]
    assert len(_FakePerspective.seen) == 2  # the blank text was not sent
    request = _FakePerspective.seen[0]
    assert request["key"] == SECRET
    assert SECRET not in request["path"]
    assert request["body"]["requestedAttributes"] == {"TOXICITY": {}}
    assert request["body"]["doNotStore"] is True


def test_perspective_key_never_appears_in_repr_dict_or_errors(perspective_server: str) -> None:
    scorer = PerspectiveScorer(api_key=SECRET, endpoint=perspective_server, qps=1000)
    assert SECRET not in repr(scorer)
    assert SECRET not in str(scorer.to_dict())
    assert not hasattr(scorer, "__dict__")  # slots only: the key is in no attribute dict
    assert all(SECRET not in repr(getattr(scorer, name)) for name in ("attribute", "endpoint", "languages", "qps"))
    wrong = PerspectiveScorer(api_key="wrong-key", endpoint=perspective_server, qps=1000)
    with pytest.raises(ScorerError) as raised:
        wrong.score(["hello"])
    assert "403" in str(raised.value) and "API key not valid" in str(raised.value)
    assert "wrong-key" not in str(raised.value)


def test_perspective_unreachable_is_an_error_not_a_zero() -> None:
    scorer = PerspectiveScorer(api_key=SECRET, endpoint="http://127.0.0.1:9/nothing", qps=1000, timeout=2)
    with pytest.raises(ScorerError):
        scorer.score(["hello"])


# -- Hugging Face classifier ------------------------------------------------------------------------


def _tiny_classifier(folder: Path) -> Path:
    """A random-init 2-label BERT with a WordPiece tokenizer trained here: no download."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    wordpiece = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wordpiece.normalizer = normalizers.BertNormalizer(lowercase=True)
    wordpiece.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    corpus = ["you are kind", "you are a terrible person", "the weather is fine today"]
    wordpiece.train_from_iterator(corpus, trainers.WordPieceTrainer(vocab_size=120, special_tokens=specials))
    cls_id, sep_id = wordpiece.token_to_id("[CLS]"), wordpiece.token_to_id("[SEP]")
    wordpiece.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=wordpiece,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=2,
        id2label={0: "non-toxic", 1: "toxic"},
        label2id={"non-toxic": 0, "toxic": 1},
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_hf_scorer_runs_a_local_text_classifier(tmp_path: Path) -> None:
    folder = _tiny_classifier(tmp_path / "tiny-toxicity")
    scorer = HFToxicityScorer(str(folder))
    texts = ["you are kind", "you are a terrible person", "", "word " * 200]  # the last one is truncated
    scores = scorer.score(texts)
    assert len(scores) == len(texts)
    assert all(0.0 <= value <= 1.0 for value in scores)
    assert scores[2] == 0.0
    assert scorer.labels() == ["non-toxic", "toxic"]
    assert scorer.name == f"hf:{folder}" and scorer.version == "local"
    # the label is chosen by name, case-insensitively; a missing one lists what exists
    assert HFToxicityScorer(str(folder), toxic_label="NON-TOXIC").score(["you are kind"])[0] == pytest.approx(
        1 - scores[0], abs=1e-6
    )
    with pytest.raises(UserError, match="non-toxic"):
        HFToxicityScorer(str(folder), toxic_label="toxicity").score(["x"])


def test_hf_scorer_with_a_missing_model_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(ScorerUnavailable) as raised:
        HFToxicityScorer(str(tmp_path / "no-such-model")).score(["x"])
    assert "\n" not in str(raised.value)
