"""ARCHITECTURE.md's "Every module" section names every module of the package, and only modules that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_holistic"


def _listed() -> set[str]:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Every module\n", 1)[1].split("\n## ", 1)[0]
    listed: set[str] = set()
    folder = ""
    for line in section.splitlines():
        if heading := re.fullmatch(r"\*\*`([\w/]+)/`\*\*", line.strip()):
            folder = "" if heading.group(1) == "pytest_holistic" else heading.group(1) + "/"
        elif entry := re.match(r"- `([\w/]+\.py)`: \S", line):
            listed.add(entry.group(1) if "/" in entry.group(1) else folder + entry.group(1))
    return listed


def test_every_module_of_the_package_is_listed_once_and_each_listed_one_exists() -> None:
    modules = {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")}
    listed = _listed()
    assert sorted(modules - listed) == [], "modules missing from ARCHITECTURE.md's 'Every module'"
    assert sorted(listed - modules) == [], "modules named in ARCHITECTURE.md that do not exist"
