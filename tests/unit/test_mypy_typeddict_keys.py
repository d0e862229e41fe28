"""The type check's own plugin (``tools/mypy_typeddict_keys.py``): ``.get`` on a TypedDict must name a declared key."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SOURCE = '''
from typing import NotRequired, TypedDict


class Run(TypedDict):
    key: str
    label: NotRequired[str]


def read(run: Run) -> str:
    name = run.get("label")        # declared: fine
    old = run.get("title", "")     # not declared: an error
    return f"{run['key']} {name} {old}"
'''


def test_a_get_of_an_undeclared_key_fails_the_type_check(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api", reason="mypy is in the test extra")
    (tmp_path / "reader.py").write_text(SOURCE)
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nstrict = True\nplugins = {ROOT / 'tools' / 'mypy_typeddict_keys.py'}\n")
    stdout, _, status = api.run(
        ["--config-file", str(config), "--cache-dir", str(tmp_path / "cache"), str(tmp_path / "reader.py")]
    )
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert status == 1
    assert len(errors) == 1 and 'TypedDict "Run" has no key "title" (read with .get)' in errors[0]
    assert "reader.py:12:" in errors[0]  # the line of the undeclared read, not the declared one
