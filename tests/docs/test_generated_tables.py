"""The reference's option and metric tables come from the code (docs/gen_tables.py, the MkDocs hook): every option
pytest registers and every registered metric is in them, and the pages ask for them."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_holistic.metrics import BUILTIN, POPULATION, SCORED
from pytest_holistic.metrics.base import EFFICIENCY
from pytest_holistic.models.builtin import BUILTIN_BACKENDS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gen_tables() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_tables", ROOT / "docs" / "gen_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_tables", module)
    spec.loader.exec_module(module)
    return module


def registered_flags(pytestconfig: pytest.Config) -> set[str]:
    """The holistic group's flags as pytest itself registered them in this session."""
    group = pytestconfig._parser.getgroup("holistic")
    return {name for option in group.options for name in option.names()}


def test_every_option_pytest_registers_is_in_the_table(gen_tables: ModuleType, pytestconfig: pytest.Config) -> None:
    table = gen_tables.options_markdown()
    flags = registered_flags(pytestconfig)
    assert "--holistic-gate" in flags and "--holistic-toxicity-scorer" in flags and "--holistic-retries" in flags
    missing = sorted(flag for flag in flags if f"`{flag}`" not in table)
    assert not missing, f"options missing from the generated table: {missing}"


def test_every_declared_option_and_ini_key_is_in_the_table(gen_tables: ModuleType, pytestconfig: pytest.Config) -> None:
    table = gen_tables.options_markdown()
    declared = [metric.option for metric in SCORED.values() if metric.option is not None]
    declared += [option for kind in BUILTIN_BACKENDS for option in kind.options]
    for option in declared:
        assert f"`{option.flag}`" in table
        if option.ini is not None:
            assert f"`{option.ini}`" in table
    inis = [name for name in pytestconfig._parser._inidict if name.startswith("holistic_")]
    assert inis and not [name for name in inis if f"`{name}`" not in table]


def test_every_registered_metric_is_in_the_table(gen_tables: ModuleType) -> None:
    table = gen_tables.metrics_markdown()
    names = [*BUILTIN, *POPULATION, *SCORED, *EFFICIENCY]
    missing = [name for name in names if f"`{name}`" not in table]
    assert not missing, f"metrics missing from the generated table: {missing}"
    for info in [*BUILTIN.values(), *POPULATION.values()]:
        row = next(line for line in table.splitlines() if line.startswith(f"| `{info.name}` |"))
        assert row.count(" | ") == 6, row  # seven cells: nothing in a cell broke the table


def test_the_reference_pages_ask_for_the_tables_and_get_them(gen_tables: ModuleType) -> None:
    for page, name, sample in (("options.md", "options", "`--holistic-stop-early`"), ("metrics.md", "metrics", "`ece_10_bin`")):
        text = (ROOT / "docs" / "reference" / page).read_text()
        assert f"<!-- generated: {name} -->" in text.splitlines()
        built = gen_tables.on_page_markdown(text, page=None, config=None, files=None)
        assert sample in built and "<!-- generated:" not in built


def test_the_hook_is_configured() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^hooks:\n  - docs/gen_tables\.py$", config, re.MULTILINE)


def test_the_unknown_metric_message_points_at_the_metrics_page() -> None:
    from pytest_holistic.metrics import unknown_metric

    message = unknown_metric("exact_mach", list(BUILTIN))
    path = re.search(r"docs/\S+\.md", message)
    assert path is not None and (ROOT / path.group()).is_file()
