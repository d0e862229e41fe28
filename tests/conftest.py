"""Shared fixtures: a tiny GPT-2, T5 and BART built once per session, and helpers for pytester suites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tiny_model import build_tiny_gpt2, build_tiny_seq2seq


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny GPT-2 folder (loads with from_pretrained, like any local model)."""
    return build_tiny_gpt2(tmp_path_factory.mktemp("models") / "tiny-gpt2")


@pytest.fixture(scope="session")
def tiny_t5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny T5 folder (an encoder-decoder with relative positions)."""
    return build_tiny_seq2seq(tmp_path_factory.mktemp("models") / "tiny-t5", "t5")


@pytest.fixture(scope="session")
def tiny_bart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny BART folder (an encoder-decoder with learned positions)."""
    return build_tiny_seq2seq(tmp_path_factory.mktemp("models") / "tiny-bart", "bart")


@pytest.fixture
def read_report():
    """Read the report.json a pytester run wrote under its reports/ folder."""

    def read(root: Path, model: str) -> dict:
        return json.loads((root / "reports" / model / "latest" / "report.json").read_text())

    return read
