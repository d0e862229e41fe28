"""A mypy plugin: ``.get("key")`` on a ``TypedDict`` must name a declared key, as ``["key"]`` already must.

Why: the report readers (``report/payload.py``'s ``TypedDict``s) read optional fields with ``.get``, and mypy accepts
any literal key there, so a field renamed in the payload would go unnoticed wherever it is read with ``.get``. With
this plugin (``[tool.mypy] plugins`` in pyproject.toml) such a read is an error naming the type and the key.
The return type is still worked out by mypy's own rule for ``TypedDict.get``.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.checkexpr import try_getting_str_literals
from mypy.plugin import MethodContext, Plugin
from mypy.plugins.default import typed_dict_get_callback
from mypy.types import Type, TypedDictType, get_proper_type

GET = "typing.Mapping.get"


def _checked_get(ctx: MethodContext) -> Type:
    """Report each literal key the TypedDict does not declare, then type the call as mypy does."""
    receiver = get_proper_type(ctx.type)
    if isinstance(receiver, TypedDictType) and ctx.args and len(ctx.args[0]) == 1:
        keys = try_getting_str_literals(ctx.args[0][0], ctx.arg_types[0][0])
        for key in keys or ():
            if key not in receiver.items:
                name = receiver.fallback.type.name
                ctx.api.fail(f'TypedDict "{name}" has no key "{key}" (read with .get)', ctx.context)
    return typed_dict_get_callback(ctx)


class TypedDictKeys(Plugin):
    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return _checked_get if fullname == GET else None


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point for a plugin module."""
    return TypedDictKeys
