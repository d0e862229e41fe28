"""The JSON Schema of ``report.json`` (draft 2020-12), shipped in the package, and a validator for it.

Tests check real reports against it, and tools that read or merge reports can check theirs before trusting a
field. A report's ``schema_version`` names the schema it follows; this package ships the schema of the version
it writes (:data:`.payload.SCHEMA_VERSION`); :func:`.payload.read_payload` reads a report with it. ``jsonschema`` is imported on the first validation only, so
importing the plugin costs nothing.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

SCHEMA_FILE = "report.schema.json"


def load_schema() -> dict[str, Any]:
    """The schema as plain data, read from the installed package (a fresh copy each call: callers may change it)."""
    text = resources.files("pytest_holistic").joinpath("data", "schema", SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _where(path: Any) -> str:
    """A JSON pointer-like location for a message: ``runs/0/metrics/exact_match/ci95`` (``(root)`` at the top)."""
    parts = [str(part) for part in path]
    return "/".join(parts) if parts else "(root)"


def validate_report(payload: Any, schema: dict[str, Any] | None = None) -> list[str]:
    """Every way ``payload`` breaks the report schema, one line each (``location: problem``); empty when it is valid.

    All errors are listed, sorted by where they are, so a report with several problems is fixed in one pass.
    """
    from jsonschema import Draft202012Validator  # heavy: only when a report is validated

    validator = Draft202012Validator(schema if schema is not None else load_schema())
    errors = sorted(validator.iter_errors(payload), key=lambda error: [str(part) for part in error.absolute_path])
    return [f"{_where(error.absolute_path)}: {error.message}" for error in errors]


REPORT_SCHEMA = "pytest-holistic/report"
OLDEST_READABLE = 3  # the first version whose runs carry "requested_metrics" and records their "run"
MAX_REPORT_BYTES = 512 << 20
"""Larger than any real report (10 000 records with few-shot prompts take tens of MB); a bigger file is not read."""
MAX_DEPTH = 64
"""JSON nesting a report never comes near (about 10 levels); deeper input is refused before anything recurses into it."""
READ_AT_ROOT = (
    "schema", "schema_version", "created", "run_id", "complete", "interrupted", "model", "runs", "gates", "workers",
    "runs_without_records",
)
READ_IN_RUN = (
    "key", "scenario", "name", "edition", "helm_group", "adapter", "split", "requested_metrics", "metrics", "perturbations",
    "groups", "instances",
)  # fmt: skip
"""What the readers of older versions use (the leaderboard, the page, the baseline comparison), checked for them."""


def _loosened(node: Any) -> Any:
    """A schema that checks the type of every field present but requires none and allows others.

    Older versions lack some fields and name others differently; what they do have must still be of the type the
    readers expect. Enumerations become plain strings, patterns and formats go, and ``oneOf`` becomes ``anyOf``: once
    loosened, two of its branches (a named and an unnamed model) can both match.
    """
    if isinstance(node, list):
        return [_loosened(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("required", "const", "pattern", "format", "propertyNames", "minLength") or (
            key == "additionalProperties" and value is False
        ):
            continue
        if key == "enum":
            if all(isinstance(item, str) for item in value):
                out["type"] = "string"
            continue
        out["anyOf" if key == "oneOf" else key] = _loosened(value)
    return out


def reader_schema() -> dict[str, Any]:
    """The schema an older version's report is read against: the fields the readers use, typed as this version types them."""
    schema = load_schema()
    schema["properties"] = {name: schema["properties"][name] for name in READ_AT_ROOT}
    run = schema["$defs"]["run"]
    run["properties"] = {name: run["properties"][name] for name in READ_IN_RUN}
    loosened: dict[str, Any] = _loosened(schema)
    loosened["properties"]["schema_version"] = {"type": "integer"}
    loosened["$defs"]["run"]["required"] = ["key", "scenario"]
    loosened["required"] = ["model", "runs"]
    return loosened


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _printable(text: str, limit: int = 160) -> str:
    """One line of at most ``limit`` characters, control characters (escape codes too) shown as ``\\xNN``."""
    text = _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _problem(error: Any) -> str:
    """One schema error in a line: where, and what is wrong (a wrong type named by its JSON type, not its whole value)."""
    where = _printable(_where(error.absolute_path), 120)
    if error.validator == "type":
        expected = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        return f"{where}: is {_json_type(error.instance)}, expected {_printable(' or '.join(map(str, expected)))}"
    return f"{where}: {_printable(error.message)}"


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    if type(value) in names:
        return names[type(value)]
    return "an integer" if isinstance(value, int) else "a number"


def _too_deep(data: Any, limit: int) -> bool:
    """Whether objects and arrays nest deeper than ``limit`` (walked without recursion)."""
    stack = [(data, 1)] if isinstance(data, dict | list) else []
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    value = int(text)
    if abs(value) >= 1 << 63:
        raise ValueError(f"the integer {text[:20]}... is out of range")
    return value


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _read_regular(path: Path, name: str, fix: str) -> bytes:
    """The file's bytes; anything but a regular file of at most MAX_REPORT_BYTES is refused before it is read.

    The file is opened without blocking and checked on the open descriptor, so a FIFO (or a file swapped for one)
    never holds the reader.
    """
    from ..errors import UserError

    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UserError(f"{name}: no such file; {fix}") from None
    except OSError as error:
        raise UserError(f"{name}: cannot read it ({error.strerror or error}); {fix}") from None
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise UserError(f"{name}: is a folder without a report.json; {fix}")
        if not stat.S_ISREG(status.st_mode):
            raise UserError(f"{name}: not a regular file ({_kind(status.st_mode)}); {fix}")
        if status.st_size > MAX_REPORT_BYTES:
            raise UserError(f"{name}: {status.st_size} bytes, more than the {MAX_REPORT_BYTES >> 20} MiB a report can be; {fix}")
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(MAX_REPORT_BYTES + 1)
    except OSError as error:
        raise UserError(f"{name}: cannot read it ({error.strerror or error}); {fix}") from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_REPORT_BYTES:  # it grew after the check
        raise UserError(f"{name}: more than the {MAX_REPORT_BYTES >> 20} MiB a report can be; {fix}")
    return data


def _kind(mode: int) -> str:
    kinds: tuple[tuple[Callable[[int], bool], str], ...] = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    kinds += ((stat.S_ISSOCK, "a socket"),)
    return next((what for test, what in kinds if test(mode)), "not a plain file")


def _problems(payload: Any, schema: dict[str, Any]) -> list[str]:
    """Every schema error of ``payload``, one line each, sorted by where they are."""
    from jsonschema import Draft202012Validator  # heavy: only when a report is read

    errors = sorted(Draft202012Validator(schema).iter_errors(payload), key=lambda error: [str(p) for p in error.absolute_path])
    return [_problem(error) for error in errors]
