"""Regenerate the conformance goldens by running HELM's and fmeval's own code on the project's seeded inputs.

Not part of the test run: CI only compares against the committed files in ``golden/``. Run it when a
reference version or an input set changes, then review the diff and commit it:

    .venv/bin/python tests/conformance/generate_goldens.py            # every section
    .venv/bin/python tests/conformance/generate_goldens.py --only perturbations

How it works, per section (``SECTIONS``):

1. the project side (this interpreter) builds the section's inputs with ``tests/conformance/inputs/<section>.py``:
   seeded texts, the core suite's own instances, word-list files written in the references' formats under
   ``golden/<section>/`` (committed, since both sides read them);
2. the oracle side, a separate virtual environment holding exactly ``oracle_requirements.txt`` (each line
   installed with ``--no-deps``), runs ``oracle/<section>.py INPUTS OUTPUT FILES``: it imports HELM or fmeval
   and calls their functions on those inputs; no project code is imported there and none of theirs here;
3. the oracle's cases, each with its inputs and the reference's outputs, are written to ``golden/<section>.json``
   with the versions that produced them. Nothing time- or machine-dependent goes in, so an unchanged input set
   regenerates byte-identical files.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
GOLDEN = HERE / "golden"
REQUIREMENTS = HERE / "oracle_requirements.txt"
SECTIONS = ("prompts", "perturbations", "helm_metrics", "fmeval_metrics", "scenarios")
"""Each has ``inputs/<name>.py`` (``build(files: Path) -> dict``) and ``oracle/<name>.py``."""
REFERENCES = ("crfm-helm", "fmeval")
SCHEMA = 1


def default_venv() -> Path:
    from tests.conformance.envs import cache_root

    return cache_root() / "conformance-oracle"


def ensure_oracle(venv: Path) -> Path:
    """The oracle interpreter, (re)installed when ``oracle_requirements.txt`` changed since the last install."""
    from tests.conformance.envs import ensure_env

    return ensure_env(venv, REQUIREMENTS)


def oracle_versions(python: Path) -> dict[str, str]:
    """The installed versions of the references, read from the oracle environment itself."""
    code = (
        "import json, sys, importlib.metadata as m; "
        f"print(json.dumps({{n: m.version(n) for n in {list(REFERENCES)!r}}} | "
        "{'python': '.'.join(map(str, sys.version_info[:3]))}))"
    )
    return json.loads(subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout)


def generate(section: str, python: Path, versions: dict[str, str]) -> Path:
    builder = importlib.import_module(f"tests.conformance.inputs.{section}")
    files = GOLDEN / section
    files.mkdir(parents=True, exist_ok=True)
    inputs = builder.build(files)
    with tempfile.TemporaryDirectory() as scratch:
        given, produced = Path(scratch) / "inputs.json", Path(scratch) / "output.json"
        given.write_text(json.dumps(inputs), encoding="utf-8")
        # The oracle runs in a scratch folder: HELM writes a benchmark_output/ folder where it starts.
        subprocess.run(
            [str(python), str(HERE / "oracle" / f"{section}.py"), str(given), str(produced), str(files)], check=True, cwd=scratch
        )
        output = json.loads(produced.read_text(encoding="utf-8"))
    if not any(files.iterdir()):
        files.rmdir()
    golden = {
        "schema": SCHEMA,
        "section": section,
        "produced_by": versions,
        "regenerate": f"python tests/conformance/generate_goldens.py --only {section}",
        **output,
    }
    target = GOLDEN / f"{section}.json"
    target.write_text(json.dumps(golden, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))  # run as a script: the project's tests package, for the inputs and envs
    from tests.conformance.envs import pin_numerics

    pin_numerics()  # before anything imports numpy: byte-identical goldens on any machine
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", choices=SECTIONS, help="regenerate this section only (repeatable)")
    parser.add_argument(
        "--venv", type=Path, default=default_venv(), help="where the oracle environment lives (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    python = ensure_oracle(args.venv)
    versions = oracle_versions(python)
    for section in args.only or SECTIONS:
        print(f"{section}: {generate(section, python, versions).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
