"""Where WordNet 3.0's dict files are, and whether they are all there.

Two features read WordNet: the ``synonym`` perturbation and METEOR's synonym stage. Both look in the same folder
(``WNSEARCHDIR``, else Debian's ``/usr/share/wordnet`` from the ``wordnet-base`` package) and say the same thing
when it is missing, so the location lives here, below both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

PARTS_OF_SPEECH: Mapping[str, str] = MappingProxyType({"n": "noun", "v": "verb", "a": "adj", "r": "adv"})
"""WordNet's part-of-speech letters and the names its files carry (``index.noun``, ``data.verb``, ``adj.exc``)."""

MISSING = (
    "synonym needs WordNet 3.0: install Debian's wordnet-base (apt-get install wordnet-base) "
    "or set WNSEARCHDIR to a WordNet dict folder"
)


def wordnet_folder() -> Path:
    """``WNSEARCHDIR``, else Debian's folder (read at each call, so a changed variable is honoured)."""
    return Path(os.environ.get("WNSEARCHDIR") or "/usr/share/wordnet")


def wordnet_files(folder: Path) -> list[Path]:
    """The index, data and exception files WordNet needs in ``folder``."""
    return [folder / f"{kind}.{name}" for name in PARTS_OF_SPEECH.values() for kind in ("index", "data")] + [
        folder / f"{name}.exc" for name in PARTS_OF_SPEECH.values()
    ]


def wordnet_unavailable() -> str | None:
    """One line saying why WordNet cannot be read here (its dict files are missing), or None when it can."""
    if all(path.is_file() for path in wordnet_files(wordnet_folder())):
        return None
    return MISSING
