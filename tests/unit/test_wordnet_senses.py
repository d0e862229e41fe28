"""WordNet's sense index derived from the dict files of Debian's wordnet-base, so METEOR needs nothing more."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_holistic.metrics import SCORED
from pytest_holistic.metrics.wordnet_senses import sense_index_text

SYSTEM = Path("/usr/share/wordnet")
REAL_SENSE_INDEX = SYSTEM / "index.sense"
needs_debian_sense_index = pytest.mark.skipif(
    not REAL_SENSE_INDEX.is_file(), reason="Debian's wordnet-base and wordnet-sense-index not installed"
)

# A miniature WordNet in the dict files' formats (wndb(5WN)): a head adjective and a satellite with two words, a noun
# lemma written twice with different case in one synset, a verb and an adverb, and a licence header to skip.
MINI = {
    "data.adj": "  1 licence text\n"
    "00001740 00 a 01 able(p) 0 001 & 00002000 s 0000 | gloss\n"
    "00002000 00 s 02 big(a) 0 Large 1 001 & 00001740 a 0000 | gloss\n",
    "data.noun": "00003000 03 n 02 Earth 0 earth 1 000 | the planet\n00004000 03 n 01 earth 2 000 | soil\n",
    "data.verb": "00005000 29 v 01 run 0 000 01 + 02 00 | move fast\n",
    "data.adv": "00006000 02 r 01 quickly 0 000 | fast\n",
    "index.adj": "  1 licence text\nable a 1 1 & 1 0 00001740\nbig a 1 1 & 1 1 00002000\nlarge a 1 1 & 1 0 00002000\n",
    "index.noun": "earth n 2 0 2 1 00004000 00003000\n",
    "index.verb": "run v 1 0 1 0 00005000\n",
    "index.adv": "quickly r 1 0 1 0 00006000\n",
    "cntlist.rev": "big%5:00:00:able(p):00 1 5\nearth%1:03:02:: 1 7\n",
}

# senseidx(5WN), by hand: lemma%ss_type:lex_filenum:lex_id:head_word:head_id offset sense_number tag_cnt, byte order.
MINI_SENSE_INDEX = """\
able%3:00:00:: 00001740 1 0
big%5:00:00:able:00 00002000 1 5
earth%1:03:00:: 00003000 2 0
earth%1:03:02:: 00004000 1 7
large%5:00:01:able:00 00002000 1 0
quickly%4:02:00:: 00006000 1 0
run%2:29:00:: 00005000 1 0
"""


def test_the_sense_index_follows_senseidx_on_a_miniature_wordnet(tmp_path: Path) -> None:
    for name, text in MINI.items():
        (tmp_path / name).write_text(text)
    assert sense_index_text(tmp_path) == MINI_SENSE_INDEX
    (tmp_path / "cntlist.rev").unlink()  # optional: every tag count is then 0
    assert sense_index_text(tmp_path) == MINI_SENSE_INDEX.replace(" 5\n", " 0\n").replace(" 7\n", " 0\n")


@needs_debian_sense_index
def test_the_derived_sense_index_is_debians_line_for_line() -> None:
    derived = sense_index_text(SYSTEM).splitlines()
    real = REAL_SENSE_INDEX.read_text(encoding="utf-8").splitlines()
    assert len(derived) == len(real) == 206941
    mismatches = [(mine, theirs) for mine, theirs in zip(derived, real, strict=True) if mine != theirs]
    assert mismatches == []


def _wordnet_base_only(folder: Path) -> Path:
    """What Debian's wordnet-base alone installs: the dict files without index.sense."""
    folder.mkdir()
    for path in SYSTEM.iterdir():
        if path.is_file() and path.name != "index.sense":
            (folder / path.name).symlink_to(path)
    return folder


@needs_debian_sense_index
def test_meteor_over_wordnet_base_alone_scores_as_over_the_real_sense_index(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PYTEST_HOLISTIC_CACHE_DIR", str(tmp_path / "cache"))
    texts = ["It is autumn.", "A large hound crossed the street quickly.", "The council passed a budget."]
    references = [["It is fall."], ["A big dog ran across the road."], ["The council approved the new budget."]]
    monkeypatch.setenv("WNSEARCHDIR", str(SYSTEM))
    with_real_index = SCORED["meteor"].make_scorer("").score(texts, references)
    monkeypatch.setenv("WNSEARCHDIR", str(_wordnet_base_only(tmp_path / "wordnet-base")))
    with_derived_index = SCORED["meteor"].make_scorer("").score(texts, references)
    assert with_derived_index == with_real_index
    assert with_real_index[0] > 0.9  # fall/autumn: the synonym stage, WordNet's part, did match
    layouts = list((tmp_path / "cache").glob("nltk_data-*/corpora/wordnet/index.sense"))
    assert len(layouts) == 2 and layouts[0].read_bytes() == layouts[1].read_bytes()


def test_dict_files_that_are_not_wordnets_are_one_skip_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pytest_holistic.metrics import ScorerUnavailable

    folder = tmp_path / "not-wordnet"
    folder.mkdir()
    for name in ("adj", "adv", "noun", "verb"):  # every file the lookup asks for, none in WordNet's format
        for kind in ("index", "data"):
            (folder / f"{kind}.{name}").write_text("not a wordnet line\n")
        (folder / f"{name}.exc").write_text("")
    monkeypatch.setenv("WNSEARCHDIR", str(folder))
    monkeypatch.setenv("PYTEST_HOLISTIC_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ScorerUnavailable) as raised:
        SCORED["meteor"].make_scorer("")
    message = str(raised.value)
    assert message.startswith(f"METEOR cannot derive WordNet's sense index from {folder} (ValueError: ")
    assert message.endswith("point WNSEARCHDIR at a WordNet 3.0 dict folder") and "\n" not in message
    assert [path for path in (tmp_path / "cache").iterdir() if path.is_dir()] == []  # no half-made layout left behind


def test_a_layout_missing_a_file_is_rebuilt_not_reused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A cache folder written by another version (no index.sense, as before it was derived) must not be trusted."""
    from pytest_holistic.metrics.summarization_scorers import _wordnet_layout

    source = tmp_path / "mini"
    source.mkdir()
    for name, text in MINI.items():
        (source / name).write_text(text)
    cache = tmp_path / "cache"
    data = _wordnet_layout(source, cache)
    corpus = data / "corpora" / "wordnet"
    assert (corpus / "index.sense").read_text() == MINI_SENSE_INDEX
    (corpus / "index.sense").unlink()  # what the older layout held: lexnames but no index.sense
    (corpus / "data.noun").write_text("stale\n")
    assert _wordnet_layout(source, cache) == data
    assert (corpus / "index.sense").read_text() == MINI_SENSE_INDEX
    assert (corpus / "data.noun").read_text() == MINI["data.noun"]  # rebuilt whole, not patched
    assert sorted(path.name for path in cache.iterdir() if path.is_dir()) == [data.name]


def test_a_wordnet_folder_nltk_cannot_read_is_one_skip_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Whatever nltk's reader raises on a broken folder becomes METEOR's one-line reason, not a traceback."""
    from pytest_holistic.metrics import ScorerUnavailable, summarization_scorers

    source = tmp_path / "mini"
    source.mkdir()
    for name, text in MINI.items():
        (source / name).write_text(text)
    for name in ("adj", "adv", "noun", "verb"):
        (source / f"{name}.exc").write_text("")
    broken = tmp_path / "broken"
    (broken / "corpora" / "wordnet").mkdir(parents=True)
    for path in source.iterdir():  # every file but the sense index nltk opens while it loads
        (broken / "corpora" / "wordnet" / path.name).write_bytes(path.read_bytes())
    (broken / "corpora" / "wordnet" / "lexnames").write_text(summarization_scorers.lexnames_text())
    monkeypatch.setattr(summarization_scorers, "_wordnet_layout", lambda folder, cache: broken)
    monkeypatch.setenv("WNSEARCHDIR", str(source))
    with pytest.raises(ScorerUnavailable) as raised:
        SCORED["meteor"].make_scorer("")
    message = str(raised.value)
    assert message.startswith(f"METEOR cannot read WordNet from {broken / 'corpora' / 'wordnet'} (")
    assert "index.sense" in message and "\n" not in message
