"""The package's import graph, read from its source: no module imports itself back through others, and the parts
that run in every process import nothing from the controller's report package.

Every ``import`` and ``from ... import`` counts, at module level, inside functions and under ``TYPE_CHECKING`` alike:
a loop hidden from the interpreter is still a loop for whoever reads or changes the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_holistic"
WORKER_SIDE = ("pytest_holistic.worker", "pytest_holistic.runspec", "pytest_holistic.execution", "pytest_holistic.channels")
"""Modules every process runs (an xdist worker included), which must not need ``pytest_holistic.report``."""


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports: ``from . import x`` is module ``x`` when it is one, else the package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(0, node.level - 1)):
                base = base.rpartition(".")[0]
            target = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
            for alias in node.names:
                if f"{target}.{alias.name}" in known:
                    found.add(f"{target}.{alias.name}")
                elif target in known:
                    found.add(target)
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_loops() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_reader_sees_type_only_and_function_level_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\ndef f():\n    from . import c\n"
    )
    known = {"pkg": package / "__init__.py", "pkg.a": package / "a.py", "pkg.b": package / "b.py", "pkg.c": package / "c.py"}
    assert imported("pkg.a", package / "a.py", known) == {"pkg.b", "pkg.c"}


def test_the_package_has_no_import_loop() -> None:
    assert cycles(graph()) == []


def test_the_worker_side_imports_nothing_from_the_report_package() -> None:
    edges = graph()
    for name in WORKER_SIDE:
        assert not {module for module in edges[name] if module.startswith("pytest_holistic.report")}, name


LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundations", frozenset({"errors", "options", "command_line", "builtin_options", "paths", "printable", "scrubbing", "wordnet_files", "_devices", "_hub", "_roles"})),
    ("instances", frozenset({"scenarios"})),
    ("metrics", frozenset({"metrics"})),
    ("models", frozenset({"models", "progress"})),
    ("perturbations", frozenset({"perturbations"})),
    ("adaptation", frozenset({"plans", "answer_methods", "scoring_adapters", "methods", "adaptation"})),
    ("the run", frozenset({"gates", "regression_specs", "extensions", "writer_kinds", "settings", "records", "runspec"})),
    ("every process", frozenset({"channels", "shards", "stops", "execution", "answers", "worker"})),
    ("the controller", frozenset({"report"})),
    ("pytest glue", frozenset({"", "plugin", "activation", "configure", "_xdist", "hookspec", "__main__"})),
)
"""ARCHITECTURE.md's layer table, by each module's first name under the package ("" is the package's public API)."""


def layer_of(module: str) -> int:
    first = module.removeprefix("pytest_holistic").lstrip(".").split(".")[0]
    found = [depth for depth, (_, members) in enumerate(LAYERS) if first in members]
    assert found, f"{module} is in no layer of ARCHITECTURE.md's table"
    return found[0]


def test_each_layer_imports_only_from_the_layers_above_it() -> None:
    upward = [
        f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for name, targets in sorted(graph().items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(name)
    ]
    assert upward == []


def test_the_layer_table_in_architecture_md_lists_the_same_layers_in_the_same_order() -> None:
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ") and "`" in line.split("|")[2]]
    assert rows[: len(LAYERS)] == [name for name, _ in LAYERS]
