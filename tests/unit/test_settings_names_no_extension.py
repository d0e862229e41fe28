"""The settings read the options of model-scored metrics and backends without knowing any of them.

Each metric and backend declares its options next to its own code; ``settings.py`` reads them through the session's
registry. So its text names no registered model-scored metric, no built-in backend, and none of their options.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_holistic.metrics import SCORED
from pytest_holistic.models.builtin import BUILTIN_BACKENDS

SETTINGS = Path(__file__).resolve().parents[2] / "pytest_holistic" / "settings.py"


def _owned_names() -> set[str]:
    """Every name a metric or a backend owns: its own name, and its options' flags, ini keys and stored names."""
    names = {*SCORED, *(kind.name for kind in BUILTIN_BACKENDS)}
    options = [metric.option for metric in SCORED.values() if metric.option is not None]
    options += [option for kind in BUILTIN_BACKENDS for option in kind.options]
    for option in options:
        names.update(name for name in (option.flag, option.ini, option.dest) if name is not None)
    return names


def test_the_owned_names_cover_every_metric_and_backend_option() -> None:
    """The scan below is only as good as its list: it holds the names this test must not find."""
    names = _owned_names()
    assert {"toxicity", "bertscore_f1", "summac", "qafacteval", "transformers", "embedded", "scripted", "openai"} <= names
    assert {"--holistic-toxicity-scorer", "holistic_toxicity_scorer", "--holistic-bertscore-model"} <= names
    assert {"--holistic-dtype", "--holistic-chat-template", "holistic_chat_template", "--holistic-api-key-env"} <= names


@pytest.mark.parametrize("name", sorted(_owned_names()))
def test_settings_name_no_metric_backend_or_their_options(name: str) -> None:
    text = SETTINGS.read_text(encoding="utf-8").lower()
    assert name.lower() not in text, f"settings.py names {name!r}; declare it with its metric or backend"
