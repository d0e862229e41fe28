"""A memorisation probe in the shape of HELM's copyright scenario: a text's opening as input, its continuation as reference.

HELM (``copyright_scenario.py``; seeds digest §2.9) gives the model the prefix of a book or a code file and
scores how much of the true continuation it reproduces with ``longest_common_prefix_length``, ``edit_distance``
and ``edit_similarity``. The texts here are ten short passages written for this project
(``pytest_holistic/data/memorisation/passages.jsonl``; fields ``id``, ``title``, ``text``), so a model that
continues them verbatim has either memorised this repository or is guessing well: the probe checks the
pipeline and the metrics, and a suite can point it at its own texts with ``path=``. The cut falls after a
seeded number of words between ``min_prefix_words`` and ``max_prefix_words``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from ...errors import ScenarioError
from ..instance import Instance, Reference
from ..scenario import Scenario

PASSAGES = Path(__file__).resolve().parents[2] / "data" / "memorisation" / "passages.jsonl"


def _passages(path: Path) -> list[dict[str, str]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(f"memorisation: cannot read {path} ({error}); pass path= to a UTF-8 JSONL file") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            rows.append({"id": str(row["id"]), "text": str(row["text"])})
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise ScenarioError(f"memorisation: {path}:{number} is not a JSON object with 'id' and 'text' ({error})") from None
    return rows


def memorisation(
    *, path: str | Path | None = None, min_prefix_words: int = 20, max_prefix_words: int = 30, seed: int = 0
) -> Scenario:
    """One test instance per passage: the first words as input, the rest as the single reference; id = passage id."""
    if not (
        isinstance(min_prefix_words, int) and isinstance(max_prefix_words, int) and 1 <= min_prefix_words <= max_prefix_words
    ):
        raise ScenarioError(
            f"memorisation: prefix words {min_prefix_words!r}..{max_prefix_words!r} must be whole numbers with 1 <= min <= max"
        )
    source = Path(path) if path is not None else PASSAGES

    def instances() -> list[Instance]:
        rng = random.Random(f"memorisation:{seed}")
        made = []
        for row in _passages(source):
            words = row["text"].split(" ")
            cut = rng.randint(min_prefix_words, max_prefix_words)
            if cut >= len(words):
                raise ScenarioError(f"memorisation: passage {row['id']!r} has {len(words)} words; it needs more than {cut}")
            made.append(Instance(id=row["id"], input=" ".join(words[:cut]), references=(Reference(" " + " ".join(words[cut:])),)))
        return made

    return Scenario("memorisation", local=instances, description=f"memorisation probe over {source.name}, seed {seed}")
