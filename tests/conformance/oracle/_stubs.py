"""Stand-ins for heavy libraries that HELM's and fmeval's metric *modules* import but the functions under test never call.

HELM and fmeval import ray, torch, spaCy, pandas and more at module level, for features next to the ones the
oracles run (distributed datasets, model-based scores, human-evaluation tables). Installing them would pull in
gigabytes; instead ``install(names)`` registers, for each top-level name, a module whose every attribute is an
inert class. Any *call* into such a stub that matters would surface as a wrong type or a missing value, and
the oracles only call pure functions (string normalisation, set arithmetic, nltk, scikit-learn, numpy) whose
own imports are real packages pinned in ``oracle_requirements.txt``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any


class _StubMeta(type):
    """A class that answers every attribute, subscript or union with another stub (type hints, base classes)."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{cls.__name__}.{name}")

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __or__(cls, other: Any) -> Any:
        return cls

    def __ror__(cls, other: Any) -> Any:
        return cls


def _stub_class(name: str) -> type:
    return _StubMeta(name, (), {"__init__": lambda self, *args, **kwargs: None})


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{self.__name__}.{name}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots: frozenset[str]) -> None:
        self.roots = roots

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _StubModule(spec.name)
        module.__path__ = []  # a package, so ``import ray.data`` works
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install(*roots: str) -> None:
    """Make ``import <root>`` and ``import <root>.<anything>`` give inert stub modules (ahead of real packages)."""
    sys.meta_path.insert(0, _Finder(frozenset(roots)))
