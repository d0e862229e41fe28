"""What every pytest run pays for the plugin being installed: importing it loads few of the package's modules.

pytest imports the plugin (its ``pytest11`` entry point) in every run, also in projects that never use it, so the
modules a holistic run needs (workers, the reporter, metrics, models, perturbations) load when a run configures
them, not when the plugin is imported. Measured in a fresh interpreter, since this one has imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys

MOST_MODULES = 25
HEAVY = ("torch", "transformers", "datasets", "numpy", "sklearn", "nltk", "jsonschema", "hypothesis", "sqlite3")


def _loaded_by(code: str) -> tuple[list[str], list[str]]:
    probe = (
        f"import sys; {code}; import json;"
        "print(json.dumps([sorted(m for m in sys.modules if m == 'pytest_holistic' or m.startswith('pytest_holistic.')),"
        f" [m for m in {HEAVY!r} if m in sys.modules]]))"
    )
    completed = subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    own, heavy = json.loads(completed.stdout.strip().splitlines()[-1])
    return own, heavy


def test_importing_the_plugin_loads_at_most_25_of_its_modules_and_nothing_heavy() -> None:
    own, heavy = _loaded_by("import pytest_holistic.plugin")
    assert len(own) <= MOST_MODULES, f"{len(own)} modules: {', '.join(own)}"
    assert heavy == []


def test_the_public_api_loads_what_a_name_needs_when_it_is_used() -> None:
    own, _ = _loaded_by("import pytest_holistic")
    assert len(own) <= MOST_MODULES, f"{len(own)} modules: {', '.join(own)}"
    used, _ = _loaded_by("from pytest_holistic import Scenario, jsonl, Fields")
    assert "pytest_holistic.scenarios.scenario" in used
    assert not any(name.startswith("pytest_holistic.report") for name in used)
