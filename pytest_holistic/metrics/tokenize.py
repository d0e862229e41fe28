"""Word tokenisation for BLEU and the bias metrics, deterministic and without downloaded NLTK data.

HELM calls ``nltk.word_tokenize``, which first splits sentences with the Punkt model (a separate
``punkt_tab`` download) and then applies NLTK's Treebank-style word tokenizer to each sentence. We keep
the second step (``nltk.tokenize.NLTKWordTokenizer``) and replace Punkt with a fixed rule: a sentence ends
after ``.``, ``!`` or ``?`` followed by whitespace. The two agree except around abbreviations such as
"Mr. Smith" (Punkt keeps "Mr."; we give "Mr", "."), which no HELM word list contains. The result then
does not depend on which NLTK data a machine happens to have.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@functools.cache
def _word_tokenizer() -> Any:
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_tokenize(text: str) -> list[str]:
    """Treebank-style word tokens of ``text`` (see the module docstring for the sentence rule)."""
    tokenizer = _word_tokenizer()
    return [token for sentence in _SENTENCE_END.split(text) if sentence for token in tokenizer.tokenize(sentence)]
