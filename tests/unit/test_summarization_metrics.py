"""Summarisation metrics against separately written references: fragments, METEOR, BERTScore, SummaC."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_holistic import options
from pytest_holistic.metrics import SCORED, ScorerUnavailable
from pytest_holistic.metrics.summarization import DataStatsScorer, data_stats, extractive_fragments
from pytest_holistic.metrics.summarization_scorers import (
    BertScoreEngine,
    SummaCScorer,
    lexnames_text,
    summac_sentences,
)
from pytest_holistic.metrics.summary_text import remove_braces
from pytest_holistic.metrics.tokenize import word_tokenize

# -- extractive fragments ---------------------------------------------------------------------------------


def reference_fragments(summary: list[str], article: list[str]) -> list[int]:
    """Newsroom's procedure, written from its description: for each summary position, every article position
    where the tokens agree starts a candidate run; runs found are skipped over in the article; keep the longest."""
    found: list[int] = []
    i = 0
    while i < len(summary):
        candidates = []
        j = 0
        while j < len(article):
            k = 0
            while i + k < len(summary) and j + k < len(article) and summary[i + k] == article[j + k]:
                k += 1
            if k:
                candidates.append((k, j))
                j += k
            else:
                j += 1
        longest = max((k for k, _ in candidates), default=0)
        if longest:
            found.append(longest)
        i += longest or 1
    return found


WORDS = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=25)


@settings(max_examples=400, deadline=None)
@given(summary=WORDS, article=WORDS)
def test_fragments_equal_a_separately_written_greedy_matcher(summary: list[str], article: list[str]) -> None:
    assert extractive_fragments(summary, article) == reference_fragments(summary, article)


@settings(max_examples=200, deadline=None)
@given(summary=WORDS, article=WORDS)
def test_fragments_cover_at_most_the_summary_and_only_shared_words(summary: list[str], article: list[str]) -> None:
    fragments = extractive_fragments(summary, article)
    assert sum(fragments) <= len(summary)
    assert all(length >= 1 for length in fragments)
    if set(summary) <= set(article) and summary:
        assert sum(fragments) == len(summary)  # every word is shared, so every position starts or joins a fragment


def test_fragments_worked_example() -> None:
    article = ["the", "mayor", "opened", "the", "new", "bridge", "on", "monday"]
    summary = ["on", "monday", "the", "mayor", "opened", "a", "bridge"]
    # "on monday" (2), "the mayor opened" (3), "a" (none), "bridge" (1)
    assert extractive_fragments(summary, article) == [2, 3, 1]


def test_coverage_density_compression_by_hand() -> None:
    article = "The mayor opened the new bridge on Monday."
    summary = "On Monday the mayor opened a bridge."
    # nltk tokens, lower-cased: article 9 (with the final "."), summary 8 ("." matches the article's).
    # Fragments: "on monday" | "the mayor opened" | "bridge" | "." ("bridge ." is not contiguous in the article)
    coverage, density, compression = data_stats(summary, article)
    assert coverage == pytest.approx((2 + 3 + 1 + 1) / 8)
    assert density == pytest.approx((4 + 9 + 1 + 1) / 8)
    assert compression == pytest.approx(9 / 8)


def test_empty_summary_scores_zero_as_summeval_does() -> None:
    assert data_stats("", "Some article text.") == (0.0, 0.0, 0.0)


def test_helms_braces_go_before_the_statistics() -> None:
    # HELM strips the completion, then one leading "{" and one trailing "}" of it and of the article
    assert remove_braces("{x}") == "x"
    assert remove_braces("{{x}}") == "{x}"
    assert remove_braces(" {x} ") == " {x} "  # the completion is strip()-ed first, the article is not
    assert remove_braces("x}") == "x" and remove_braces("{x") == "x" and remove_braces("}{") == "}{"
    article = "{The mayor opened the new bridge on Monday.}"
    coverage = DataStatsScorer(0, "summarization_coverage")
    assert coverage.score(["  {The mayor opened the bridge.}\n"], [article]) == [1.0]
    assert coverage.score(["{{The mayor opened the bridge.}}"], [article]) == [6 / 8]  # "{" and "}" stay as tokens of their own


def test_qafacteval_scorer_gets_the_summaries_and_articles_without_helms_braces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "qafe_probe.py").write_text(
        "SEEN = []\ndef score(summaries, articles):\n    SEEN.append((summaries, articles))\n    return [0.5] * len(summaries)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    scorer = SCORED["qafacteval"].make_scorer("qafe_probe:score")
    assert scorer.score([" {A summary.} "], ["{An article.}"]) == [0.5]
    import qafe_probe  # type: ignore[import-not-found]

    assert qafe_probe.SEEN == [(["A summary."], ["An article."])]


# -- METEOR -------------------------------------------------------------------------------------------------


def _wordnet_or_skip():
    try:
        from pytest_holistic.metrics.summarization_scorers import nltk_wordnet

        return nltk_wordnet()
    except ScorerUnavailable as reason:
        pytest.skip(str(reason))


SENTENCES = [
    ("It is fall.", "It is autumn."),
    ("It is fall.", "It is summer."),
    ("The council approved the new budget on Tuesday.", "On Tuesday the council passed a budget."),
    ("A big dog ran across the road.", "A large hound crossed the street quickly."),
    ("Floods forced hundreds from their homes.", ""),
    ("Scientists found a new species of frog.", "Researchers discovered a previously unknown frog species."),
]


@pytest.mark.parametrize(("reference", "prediction"), SENTENCES)
def test_meteor_equals_nltk_meteor_score_called_directly(reference: str, prediction: str) -> None:
    from nltk.translate.meteor_score import single_meteor_score

    wordnet = _wordnet_or_skip()
    # fmeval tokenises with nltk.word_tokenize; metrics.tokenize.word_tokenize is proven equal to it offline
    expected = single_meteor_score(word_tokenize(reference), word_tokenize(prediction), wordnet=wordnet)
    scorer = SCORED["meteor"].make_scorer("")
    assert scorer.score([prediction], [[reference]]) == [pytest.approx(expected)]


def test_meteor_matches_fmevals_worked_example_and_takes_the_best_reference() -> None:
    _wordnet_or_skip()
    scorer = SCORED["meteor"].make_scorer("")
    autumn, summer = scorer.score(["It is autumn.", "It is summer."], [["It is fall."], ["It is fall."]])
    assert round(autumn, 2) == 0.99 and round(summer, 2) == 0.64  # fmeval's documented example (seeds digest §2.8)
    (best,) = scorer.score(["It is summer."], [["Nothing alike here.", "It is fall."]])
    assert best == pytest.approx(summer)


def test_lexnames_is_wordnets_table() -> None:
    lines = lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1" and lines[44] == "44\tadj.ppl\t3"
    assert lines[29] == "29\tverb.body\t2" and lines[28] == "28\tnoun.time\t1"


def test_meteor_without_wordnet_is_a_skip_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pytest_holistic.metrics import summarization_scorers

    monkeypatch.setenv("WNSEARCHDIR", str(tmp_path))
    summarization_scorers._nltk_wordnet.cache_clear()
    try:
        with pytest.raises(ScorerUnavailable, match="METEOR needs WordNet 3.0"):
            SCORED["meteor"].make_scorer("")
    finally:
        summarization_scorers._nltk_wordnet.cache_clear()


# -- model-backed metrics without a model -------------------------------------------------------------------


def _spec(metric: str, text: str | None) -> str:
    """The scorer spec the metric's own option makes of ``text`` (None: the option left out)."""
    option = SCORED[metric].option
    assert option is not None
    return option.parse(options.Given(option.default if text is None else text, option.flag, Path.cwd()))


@pytest.mark.parametrize(
    ("metric", "words"),
    [
        ("bertscore_f1", "--holistic-bertscore-model"),
        ("summac", "--holistic-summac-model"),
        ("qafacteval", "--holistic-qafacteval-scorer"),
    ],
)
def test_model_metrics_without_a_model_are_one_line_skips(metric: str, words: str) -> None:
    with pytest.raises(ScorerUnavailable) as raised:
        SCORED[metric].make_scorer(_spec(metric, None))
    assert words in str(raised.value) and "\n" not in str(raised.value)


# -- a tiny BERT built here ---------------------------------------------------------------------------------

WORDLIST = ["the", "a", "mayor", "opened", "bridge", "new", "on", "monday", "town", "river", "cup", "won", "team"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDLIST, "."]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("models") / "tiny-bert"
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def reference_bertscore(folder: Path, candidate: str, reference: str, layer: int) -> tuple[float, float, float]:
    """BERTScore from its definition with plain Python loops over the token vectors."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder).eval()

    def vectors(text: str) -> tuple[list[list[float]], list[int]]:
        ids = tokenizer(text)["input_ids"]
        with torch.no_grad():
            hidden = model(torch.tensor([ids]), output_hidden_states=True).hidden_states[layer][0]
        return hidden.tolist(), ids

    def cosine(u: list[float], v: list[float]) -> float:
        return sum(a * b for a, b in zip(u, v)) / math.sqrt(sum(a * a for a in u) * sum(b * b for b in v))

    (cv, cids), (rv, rids) = vectors(candidate), vectors(reference)
    special = {tokenizer.cls_token_id, tokenizer.sep_token_id}
    c_tokens = [k for k, token in enumerate(cids) if token not in special]
    r_tokens = [k for k, token in enumerate(rids) if token not in special]
    precision = sum(max(cosine(cv[i], r) for r in rv) for i in c_tokens) / len(c_tokens)
    recall = sum(max(cosine(rv[j], c) for c in cv) for j in r_tokens) / len(r_tokens)
    return precision, recall, 2 * precision * recall / (precision + recall)


PAIRS = [
    ("the mayor opened the new bridge on monday .", "the mayor opened a bridge ."),
    ("the team won the cup .", "a town team won ."),
    ("river bridge", "the new bridge on the river opened on monday ."),
]


@pytest.mark.parametrize("layer", [None, 1])
def test_bertscore_equals_the_definition_on_a_tiny_bert(tiny_bert: Path, layer: int | None) -> None:
    engine = BertScoreEngine(str(tiny_bert), layer)
    results = engine.scores([candidate for candidate, _ in PAIRS], [[reference] for _, reference in PAIRS])
    for (candidate, reference), got in zip(PAIRS, results):
        expected = reference_bertscore(tiny_bert, candidate, reference, 3 if layer is None else layer)
        assert got == pytest.approx(expected, abs=1e-5)


def test_bertscore_scorers_share_one_engine_and_take_the_best_reference(tiny_bert: Path) -> None:
    spec = _spec("bertscore_f1", f"{tiny_bert}#2")
    p, r, f = (SCORED[f"bertscore_{m}"].make_scorer(spec) for m in ("precision", "recall", "f1"))
    candidate, golds = PAIRS[0][0], [PAIRS[1][1], PAIRS[0][1]]
    expected = [reference_bertscore(tiny_bert, candidate, gold, 2) for gold in golds]
    assert p.score([candidate], [golds]) == [pytest.approx(max(e[0] for e in expected), abs=1e-5)]
    assert r.score([candidate], [golds]) == [pytest.approx(max(e[1] for e in expected), abs=1e-5)]
    assert f.score([candidate], [golds]) == [pytest.approx(max(e[2] for e in expected), abs=1e-5)]
    assert f.score([""], [[PAIRS[0][1]]]) == [0.0]  # an empty summary scores 0, as bert-score sets it


def test_bertscore_spec_is_checked(tmp_path: Path) -> None:
    from pytest_holistic.errors import UserError

    with pytest.raises(UserError, match=r"^--holistic-bertscore-model = '.*': .* is not a model folder with a config.json"):
        _spec("bertscore_f1", str(tmp_path))
    with pytest.raises(UserError, match="whole number"):
        _spec("bertscore_f1", f"{tmp_path}#last")


# -- a tiny NLI classifier built here -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("models") / "tiny-nli"
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(1)
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=3,
        id2label={0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
        label2id={"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2},
    )
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


ARTICLE = (
    "The mayor opened the new bridge on Monday. The town team won the cup on the river. Ok. The new bridge on the river opened."
)
SUMMARY = "The mayor opened a bridge on Monday. The team won the cup. A."


def test_summac_sentence_split_drops_short_sentences() -> None:
    assert summac_sentences(ARTICLE) == [
        "The mayor opened the new bridge on Monday.",
        "The town team won the cup on the river.",
        "The new bridge on the river opened.",
    ]


def test_summac_equals_the_formula_computed_pair_by_pair(tiny_nli: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_nli)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_nli).eval()

    def probabilities(premise: str, hypothesis: str) -> list[float]:
        with torch.no_grad():
            logits = model(**tokenizer(premise, hypothesis, return_tensors="pt")).logits[0]
        return torch.softmax(logits, dim=-1).tolist()

    document = summac_sentences(ARTICLE)
    summary = summac_sentences(SUMMARY)
    assert len(summary) == 2
    per_sentence = []
    for hypothesis in summary:
        probs = [probabilities(premise, hypothesis) for premise in document]
        per_sentence.append(max(p[2] for p in probs) - max(p[0] for p in probs))  # entailment 2, contradiction 0
    expected = sum(per_sentence) / len(per_sentence)

    scorer = SCORED["summac"].make_scorer(_spec("summac", f"hf:{tiny_nli}"))
    got, nothing = scorer.score([SUMMARY, "Ok."], [ARTICLE, ARTICLE])
    assert got == pytest.approx(expected, abs=1e-5)
    assert nothing == 0.0  # no summary sentence longer than 10 characters: SummaC's empty image scores 0


def test_summac_needs_entailment_and_contradiction_labels(tiny_bert: Path, tmp_path: Path) -> None:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path / "two-labels"
    config = BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, num_labels=2
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(tiny_bert / "vocab.txt")).save_pretrained(folder)
    with pytest.raises(ScorerUnavailable, match="entailment and one contradiction label"):
        SummaCScorer(str(folder)).score(["A summary sentence here."], [ARTICLE])
