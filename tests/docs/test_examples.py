"""Every Python and shell example in the README and docs/ runs, so an example that stops working fails CI.

Sybil finds the fenced ``python`` and ``bash`` blocks, and the invisible ones (``<!-- invisible-code-block: python``
... ``-->``), which set up what a later visible block of the same page uses. Each block is one test, run on its own
(so the tests hold under xdist):

* an eval file (a block with ``@pytest.mark.holistic``): the page's invisible Python blocks before it, then the block,
  saved as the file its first comment names (else ``test_example.py``) and run by pytest on the scripted model with
  ``tests/docs/scripted.yaml``, on which every item and gate must pass; a Python block before it on the page whose
  first comment names a file that is not a test (``# conftest.py``) is saved beside it first, as written;
* other Python: executed, after the page's invisible Python blocks, in an empty folder;
* shell: the page's invisible shell blocks before it, then the block, run by bash in a folder holding a copy of the
  core suite's BoolQ, IMDB and MMLU (the scenarios the examples name), with ``pytest`` standing for
  ``tests/docs/pytest_shim.py``: the command as written, on the scripted model, one instance per scenario. It must
  run pytest at least once, and no run may end in a usage, collection or internal error.

* YAML: a scripted model's rules (the only YAML the docs show), saved as ``rules.yaml`` and loaded as
  ``--model scripted:rules.yaml`` loads them (an unknown key or a wrong type fails), then asked each of its
  ``generate`` rules' prompts, which must get that rule's text.

``<!-- skip: next "reason" -->`` before a block, or ``<!-- skip: start "reason" -->`` ... ``<!-- skip: end -->`` around
several, skips them with that reason (set-up, downloads, servers, GPUs).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
RULES = HERE / "scripted.yaml"
SUITE_FILES = ("test_boolq.py", "test_imdb.py", "test_mmlu.py")
SKIP_NEXT = re.compile(r'<!--\s*skip:\s*next(?:\s+"(?P<reason>[^"]*)")?\s*-->\s*\Z')
SKIP_START = re.compile(r'<!--\s*skip:\s*start(?:\s+"(?P<reason>[^"]*)")?\s*-->')
SKIP_END = re.compile(r"<!--\s*skip:\s*end\s*-->")
TIMEOUT = 120


def _evaluate(example: Example) -> None:
    """Run by ``Example.evaluate``: the test put its runner in the namespace."""
    example.namespace["run"](example)


SYBIL = Sybil(
    parsers=[CodeBlockParser("python", _evaluate), CodeBlockParser("bash", _evaluate), CodeBlockParser("yaml", _evaluate)],
    path="../..",
    patterns=["README.md", "docs/**/*.md"],
)
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
EXAMPLES = [example for path in DOCUMENTS for example in SYBIL.parse(path)]


def language(example: Example) -> str:
    return str(example.region.lexemes["arguments"]).strip()


def invisible(example: Example) -> bool:
    return "directive" in example.region.lexemes and "invisible" in str(example.region.lexemes["directive"])


def setup_before(example: Example) -> str:
    """The source of the page's invisible blocks of the same language before this example."""
    return "".join(
        str(other.parsed)
        for other in example.document
        if other.start < example.start and invisible(other) and language(other) == language(example)
    )


def skip_reason(example: Example) -> str | None:
    before = example.document.text[: example.start]
    if (match := SKIP_NEXT.search(before)) is not None:
        return match.group("reason") or ""
    starts, ends = list(SKIP_START.finditer(before)), list(SKIP_END.finditer(before))
    if starts and (not ends or ends[-1].start() < starts[-1].start()):
        return starts[-1].group("reason") or ""
    return None


def example_id(example: Example) -> str:
    return f"{Path(example.path).relative_to(ROOT)}:{example.line}"


def test_the_docs_have_examples_of_both_kinds() -> None:
    kinds = {language(example) for example in EXAMPLES}
    assert kinds == {"python", "bash", "yaml"} and len(EXAMPLES) >= 20


@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_example(example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reason = skip_reason(example)
    if reason is not None:
        assert reason, f'{example_id(example)}: a skipped example says why: <!-- skip: next "reason" -->'
        pytest.skip(reason)
    runner: Callable[[Example, Path, pytest.MonkeyPatch], None]
    if language(example) == "bash":
        runner = run_shell
    elif language(example) == "yaml":
        runner = run_scripted_rules
    elif "@pytest.mark.holistic" in str(example.parsed):
        runner = run_eval_file
    else:
        runner = run_python
    example.namespace["run"] = lambda it: runner(it, tmp_path, monkeypatch)
    example.evaluate()


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This checkout's package first, whatever else is installed."""
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("PYTEST_ADDOPTS", None)
    return env


def run_python(example: Example, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(folder)
    source = setup_before(example) + str(example.parsed)
    exec(compile(source, example_id(example), "exec"), {"__name__": "docs_example"})  # noqa: S102 (the docs' own code)


def _named_file(source: str) -> str | None:
    """The file a block's first comment names (``# conftest.py``), if any."""
    named = re.match(r"#\s*(\S+\.py)\s*\n", source)
    return named.group(1) if named else None


def support_files_before(example: Example) -> dict[str, str]:
    """The page's Python blocks before this example that name a file that is not a test: a conftest, a helper."""
    files = {}
    for other in example.document:
        name = _named_file(str(other.parsed)) if other.start < example.start and language(other) == "python" else None
        if name is not None and not Path(name).name.startswith("test_"):
            files[name] = str(other.parsed)
    return files


def run_eval_file(example: Example, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = str(example.parsed)
    for name, text in support_files_before(example).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    named = re.match(r"#\s*(\S+\.py)\s*\n", source)
    test_file = folder / (named.group(1) if named else "test_example.py")
    test_file.parent.mkdir(parents=True, exist_ok=True)
    test_file.write_text(setup_before(example) + source)
    command = [sys.executable, "-m", "pytest", str(test_file.relative_to(folder)), "-q", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [*command, "--model", f"scripted:{RULES}", "-W", "error::pytest.PytestUnknownMarkWarning"],
        check=False,
        cwd=folder,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, f"{example_id(example)} failed on the scripted model:\n{result.stdout}\n{result.stderr}"
    assert " passed" in result.stdout.splitlines()[-1]


def run_shell(example: Example, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work, bin_dir, log = folder / "work", folder / "bin", folder / "pytest-runs.log"
    suite = work / "suites" / "core"
    suite.mkdir(parents=True)
    bin_dir.mkdir()
    core = ROOT / "suites" / "core"
    shutil.copytree(core / "data", suite / "data")
    for name in SUITE_FILES:
        shutil.copy(core / name, suite / name)
    (bin_dir / "pytest").write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "pytest_shim.py"}" "$@"\n')
    (bin_dir / "pytest").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    script = folder / "example.sh"
    script.write_text(setup_before(example) + str(example.parsed))
    env = environment(
        {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "DOCS_BIN": str(bin_dir),
            "DOCS_RULES": str(RULES),
            "DOCS_LOG": str(log),
        }
    )
    result = subprocess.run(
        ["bash", "-e", str(script)], check=False, cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    runs = log.read_text().splitlines() if log.exists() else []
    shown = f"{example_id(example)}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}\nruns:\n" + "\n".join(runs)
    assert result.returncode == 0, shown
    assert runs, f"{example_id(example)} ran no pytest command"
    assert all(run.split()[0] in ("0", "1") for run in runs), shown


def run_scripted_rules(example: Example, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    from pytest_holistic.models import GenerationRequest, load_model

    rules = folder / "rules.yaml"
    rules.write_text(str(example.parsed))
    model = load_model(f"scripted:{rules}")
    generate = yaml.safe_load(rules.read_text()).get("generate", {})
    answers = model.generate([GenerationRequest(prompt=f"Q: the {prompt}?", max_tokens=8) for prompt in generate])
    assert [answer.text for answer in answers] == list(generate.values()), example_id(example)
