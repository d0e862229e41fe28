"""``pytest`` for the docs' shell examples: the command as written, on the scripted model, one instance per scenario.

``--model NAME`` becomes ``--model scripted:NAME.yaml`` (the rules of tests/docs/scripted.yaml), so ``./my-model`` and
``gpt2`` stay two models, and after the run ``reports/NAME`` links to the scripted model's report folder (named after
its rules file), where a later command of the example looks for it. A run whose items or gates fail (exit 1) is a
run: the shim exits 0 for it; a usage, collection or internal error keeps its status. Each run's status and arguments
go to ``$DOCS_LOG``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MODEL_FLAGS = ("--model", "--holistic-model")


def main(argv: list[str]) -> int:
    args: list[str] = []
    model, report_dir, rest = "smollm2-135m", "reports", iter(argv)
    for arg in rest:
        if arg in MODEL_FLAGS:
            model = next(rest)
            continue
        if arg.startswith(tuple(f"{flag}=" for flag in MODEL_FLAGS)):
            model = arg.split("=", 1)[1]
            continue
        if arg == "--holistic-report-dir":
            args.append(arg)
            arg = report_dir = next(rest)
        args.append(arg)
    name = Path(model.rstrip("/")).name or "model"
    rules = Path(os.environ["DOCS_BIN"]) / f"{name}.yaml"
    if not rules.exists():
        rules.write_text(Path(os.environ["DOCS_RULES"]).read_text())
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--holistic-max-instances", "1"]
    status = subprocess.call([*command, *args, "--model", f"scripted:{rules}"])
    with open(os.environ["DOCS_LOG"], "a") as log:
        log.write(f"{status} pytest {' '.join(argv)}\n")
    link = Path(report_dir) / name
    folders = [f for f in Path(report_dir).glob(f"*{name}.yaml") if f.is_dir()] if Path(report_dir).is_dir() else []
    if folders and not link.exists():
        link.symlink_to(folders[0].name)
    return 0 if status in (0, 1) else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
