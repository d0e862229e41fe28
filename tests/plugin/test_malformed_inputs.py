"""A corpus of user mistakes: each gives the right exit status and one line naming the thing, the value and the fix.

Options, ini values and scripted rules files are usage errors (exit 4) before collection; marker values
and data files are collection errors (exit 2); a model that cannot load stops the run at its first item.
None of them may print a Python traceback, an INTERNALERROR or a chained "During handling" error.

Every data-file and marker case is its own test file with its own collection error, so each of those two
groups runs as one pytest process (a module-scoped fixture) and each case is asserted on its own error
section. Every other case needs a process of its own (``pytester.runpytest_subprocess``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.plugin.suites import capitals

FORBIDDEN = ("Traceback", "INTERNALERROR", "During handling")
RULES = 'generate: {"France": " Paris"}\n'
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$")


def _assert_clean(output: str) -> None:
    for marker in FORBIDDEN:
        assert marker not in output, f"{marker!r} in the output:\n{output}"


def _sections(output: str) -> dict[str, list[str]]:
    """The non-empty body lines of each ``____ TITLE ____`` section (an error or a failure)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        header = _SECTION.match(line)
        if header:
            current = sections.setdefault(header[1], [])
        elif line.startswith(("===", "---")):
            current = None
        elif current is not None and line.strip():
            current.append(line)
    return sections


def _one_line(output: str, title: str, fragments: tuple[str, ...]) -> str:
    """The single body line of section ``title``, which must hold every fragment."""
    body = _sections(output).get(title)
    assert body is not None, f"no section {title!r} in:\n{output}"
    assert len(body) == 1, f"section {title!r} is not one line: {body}"
    for fragment in fragments:
        assert fragment in body[0], f"{fragment!r} not in {body[0]!r}"
    return body[0]


def _output(result: pytest.RunResult) -> str:
    return "\n".join(result.outlines + result.errlines)


def _assert_usage_error(result: pytest.RunResult, fragments: tuple[str, ...]) -> None:
    """Exit 4, and exactly one line of output carries the message (with every fragment)."""
    output = _output(result)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    _assert_clean(output)
    lines = [line for line in output.splitlines() if fragments[0] in line]
    assert len(lines) == 1, f"the message is not on exactly one line: {lines}\n{output}"
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"


def _run_batch(folder: Path, *args: str) -> tuple[int, str]:
    """One pytest process over a whole folder of cases (what ``runpytest_subprocess`` does, for a module fixture)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_CURRENT_TEST")}
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return completed.returncode, completed.stdout + completed.stderr


# -- data files: one collection error each ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DataCase:
    id: str
    file: str  # written next to the test file; "" writes nothing
    content: bytes
    source: str  # the scenario's local source, as Python
    fragments: tuple[str, ...]


ROW = b'{"id": "a", "input": "x", "references": ["y"]}\n'
LATIN1 = b'{"id": "a", "input": "caf\xe9", "references": ["y"]}\n'
DATA_CASES = [
    DataCase(
        "jsonl_latin1",
        "latin1.jsonl",
        LATIN1,
        'jsonl("latin1.jsonl")',
        ("latin1.jsonl:1: not UTF-8 text", f"byte {LATIN1.index(0xE9)} is 0xe9", "save the file as UTF-8"),
    ),
    DataCase(
        "csv_latin1",
        "latin1.csv",
        b"id,input,references\na,caf\xe9,y\n",
        'csv_file("latin1.csv")',
        ("latin1.csv:2: not UTF-8 text", "byte 25 is 0xe9", "save the file as UTF-8"),
    ),
    DataCase(
        "jsonl_bad_line",
        "bad_line.jsonl",
        ROW + b'{"id": "b", "input": \n',
        'jsonl("bad_line.jsonl")',
        ("bad_line.jsonl:2: not valid JSON", "each line must be one JSON object"),
    ),
    DataCase(
        "jsonl_not_object",
        "list_line.jsonl",
        ROW + b'["b", "x"]\n',
        'jsonl("list_line.jsonl")',
        ("list_line.jsonl:2: expected a JSON object, got list", "one JSON object per line"),
    ),
    DataCase("jsonl_empty", "empty.jsonl", b"\n\n", 'jsonl("empty.jsonl")', ("empty.jsonl is empty", "add instances")),
    DataCase("csv_empty", "empty.csv", b"", 'csv_file("empty.csv")', ("empty.csv is empty",)),
    DataCase(
        "jsonl_missing_column",
        "qa.jsonl",
        ROW,
        'jsonl("qa.jsonl", Fields(input="question"))',
        ("qa.jsonl:1: row has no field 'question'", "fields present: id, input, references", "Fields(...)"),
    ),
    DataCase(
        "csv_missing_column",
        "qa.csv",
        b"id,input,references\na,x,y\n",
        'csv_file("qa.csv", Fields(references="answer"))',
        ("qa.csv:2: row has no field 'answer'", "Fields(...)"),
    ),
    DataCase(
        "csv_extra_field",
        "extra.csv",
        b"id,input,references\na,x,y\nb,1,2,3\n",
        'csv_file("extra.csv")',
        ("extra.csv:3: 4 field(s), but the header has 3", "quote values that contain ','"),
    ),
    DataCase(
        "csv_short_row",
        "short.csv",
        b"id,input,references\na,x\n",
        'csv_file("short.csv")',
        ("short.csv:2: 2 field(s), but the header has 3",),
    ),
    DataCase(
        "csv_unclosed_quote",
        "quote.csv",
        b'id,input,references\na,"x,y\nb,z,w\n',
        'csv_file("quote.csv")',
        ("quote.csv:3: 2 field(s), but the header has 3", "close every quote"),
    ),
    DataCase(
        "csv_repeated_header",
        "twice.csv",
        b"id,input,input\na,x,y\n",
        'csv_file("twice.csv")',
        ("twice.csv:1: header repeats column(s) 'input'", "give every column its own name"),
    ),
    DataCase(
        "csv_bad_delimiter",
        "delim.csv",
        b"id;input;references\na;x;y\n",
        'csv_file("delim.csv", delimiter=";;")',
        ("csv_file('delim.csv', delimiter=';;')", "one-character delimiter"),
    ),
    DataCase(
        "template_missing_column",
        "passage.jsonl",
        ROW,
        'jsonl("passage.jsonl", Fields(input="{passage}\\nQuestion: {input}"))',
        ("passage.jsonl:1: row has no field 'passage'",),
    ),
    DataCase(
        "template_positional",
        "positional.jsonl",
        ROW,
        'jsonl("positional.jsonl", Fields(input="Q: {}"))',
        ("positional.jsonl:1: Fields(input='Q: {}') has a positional field", "name a column"),
    ),
    DataCase(
        "template_unclosed",
        "unclosed.jsonl",
        ROW,
        'jsonl("unclosed.jsonl", Fields(input="{input"))',
        ("unclosed.jsonl:1: Fields(input='{input') is not a valid template", "write columns as {name}"),
    ),
    DataCase(
        "null_input",
        "null.jsonl",
        b'{"id": "a", "input": null, "references": ["y"]}\n',
        'jsonl("null.jsonl")',
        ("null.jsonl:1: field 'input' is null",),
    ),
    DataCase(
        "reference_without_text",
        "refs.jsonl",
        b'{"id": "a", "input": "x", "references": [{"correct": true}]}\n',
        'jsonl("refs.jsonl")',
        ("refs.jsonl:1: reference {'correct': True} has no 'text'",),
    ),
    DataCase(
        "unknown_label",
        "labels.jsonl",
        b'{"id": "a", "input": "x", "label": "maybe"}\n',
        'jsonl("labels.jsonl", Fields(labels={True: "Yes", False: "No"}))',
        ("labels.jsonl:1: label 'maybe' is not one of [True, False]", "Fields(labels=...)"),
    ),
    DataCase(
        "answer_out_of_range",
        "choices.jsonl",
        b'{"id": "a", "input": "x", "choices": ["p", "q"], "answer": 7}\n',
        'jsonl("choices.jsonl", Fields(choices="choices", answer="answer"))',
        ("choices.jsonl:1: instance 'a': answer index 7 is outside the 2 choices",),
    ),
    DataCase(
        "list_id",
        "list_id.jsonl",
        ROW + b'{"id": [1, 2], "input": "x", "references": ["y"]}\n',
        'jsonl("list_id.jsonl")',
        ("list_id.jsonl:2: field 'id' is a list; expected text or a number",),
    ),
    DataCase(
        "object_input",
        "object_input.jsonl",
        b'{"id": "a", "input": {"text": "x"}, "references": ["y"]}\n',
        'jsonl("object_input.jsonl")',
        ("object_input.jsonl:1: field 'input' is an object; expected text or a number",),
    ),
    DataCase("missing_file", "", b"", 'jsonl("nowhere.jsonl")', ("nowhere.jsonl does not exist", "check the path")),
    DataCase("folder_not_file", "", b"", 'jsonl("sub")', ("sub is a folder", "point jsonl()/csv_file() at a file")),
]

DATA_TEST = """
import pytest
from pytest_holistic import Fields, Scenario, csv_file, jsonl

scenario = Scenario("{id}", local={source})

@pytest.mark.holistic(scenario, max_train_instances=0)
def test_it(completion):
    pass
"""


@pytest.fixture(scope="module")
def data_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str]:
    folder = tmp_path_factory.mktemp("data_cases")
    (folder / "sub").mkdir()
    for case in DATA_CASES:
        if case.file:
            (folder / case.file).write_bytes(case.content)
        (folder / f"test_{case.id}.py").write_text(DATA_TEST.replace("{id}", case.id).replace("{source}", case.source))
    return _run_batch(folder, "--co")


@pytest.mark.parametrize("case", DATA_CASES, ids=[case.id for case in DATA_CASES])
def test_malformed_data_file_is_one_collection_error(data_run: tuple[int, str], case: DataCase) -> None:
    status, output = data_run
    assert status == pytest.ExitCode.INTERRUPTED, output
    _assert_clean(output)
    line = _one_line(output, f"ERROR collecting test_{case.id}.py", case.fragments)
    assert line.startswith("pytest-holistic: ")


# -- marker values: one collection error each ------------------------------------------------------------------------

MARKER_CASES = [
    ("max_instances=-1", "must be a whole number >= 1"),
    ("max_instances=0", "must be a whole number >= 1"),
    ("max_instances='ten'", "must be a whole number >= 1"),
    ("max_instances=True", "must be a whole number >= 1"),
    ("max_instances=2.5", "must be a whole number >= 1"),
    ("instructions=5", "must be a string"),
    ("input_prefix=None", "must be a string"),
    ("output_suffix=b'x'", "must be a string"),
    ("max_tokens=0", "must be a whole number >= 1 (tokens to generate)"),
    ("max_tokens=-4", "must be a whole number >= 1 (tokens to generate)"),
    ("max_tokens='ten'", "must be a whole number >= 1 (tokens to generate)"),
    ("stop=5", "must be a string or a tuple of non-empty strings"),
    ("stop=('.', '')", "must be a string or a tuple of non-empty strings"),
    ("seed='x'", "must be a whole number >= 0"),
    ("seed=-1", "must be a whole number >= 0"),
    ("max_train_instances=-2", "must be a whole number >= 0 (0: no few-shot examples)"),
    ("metrics=5", "must be a metric name or a tuple of names"),
    ("metrics=('exact_match', 3)", "must be a metric name or a tuple of names"),
    ("gates=5", "must be a gate or a tuple of gates"),
    ("split=5", "must be a split name"),
    ("split=''", "must be a split name"),
]

MARKER_TEST = """
import pytest
from pytest_holistic import Instance, scenario

@scenario
def capitals():
    yield Instance(id="fr", input="The capital of France is", references=("Paris",))

@pytest.mark.holistic(capitals, {args})
def test_it(completion):
    pass
"""


# A marker gate is refused at collection: its syntax by parse_gate, its metric name by check_metric_name.
MARKER_GATE_CASES = [
    ("EXACT_MATCH>=0.5", "'EXACT_MATCH>=0.5' (marker of {file}::test_it): no metric 'EXACT_MATCH'; did you mean 'exact_match'?"),
    ("exact_match.lower.upper>=0.5", "gate 'exact_match.lower.upper>=0.5': two bounds ('lower', 'upper') after 'exact_match'"),
    ("exact_match.upr>=0.5", "(marker of {file}::test_it): unknown bound 'upr' after metric 'exact_match'"),
    ("exact_match>=1e999", "gate 'exact_match>=1e999': threshold 1e999 is beyond the float range (it reads as infinity)"),
]


def _marker_file(index: int) -> str:
    return f"test_marker_{index:02d}.py"


def _marker_gate_file(index: int) -> str:
    return f"test_marker_gate_{index:02d}.py"


@pytest.fixture(scope="module")
def marker_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str]:
    folder = tmp_path_factory.mktemp("marker_cases")
    for index, (args, _) in enumerate(MARKER_CASES):
        (folder / _marker_file(index)).write_text(MARKER_TEST.replace("{args}", args))
    for index, (gate, _) in enumerate(MARKER_GATE_CASES):
        (folder / _marker_gate_file(index)).write_text(MARKER_TEST.replace("{args}", f"gates=({gate!r},)"))
    return _run_batch(folder, "--co")


@pytest.mark.parametrize(
    ("index", "args", "problem"), [(i, *case) for i, case in enumerate(MARKER_CASES)], ids=[a for a, _ in MARKER_CASES]
)
def test_bad_marker_value_is_one_collection_error(marker_run: tuple[int, str], index: int, args: str, problem: str) -> None:
    status, output = marker_run
    assert status == pytest.ExitCode.INTERRUPTED, output
    _assert_clean(output)
    name = _marker_file(index)
    expected = f"pytest-holistic: {name}::test_it: marker holistic({args}): {problem}"
    _one_line(output, f"ERROR collecting {name}", (expected,))


@pytest.mark.parametrize(
    ("index", "gate", "problem"), [(i, *case) for i, case in enumerate(MARKER_GATE_CASES)], ids=[g for g, _ in MARKER_GATE_CASES]
)
def test_bad_marker_gate_is_one_collection_error(marker_run: tuple[int, str], index: int, gate: str, problem: str) -> None:
    status, output = marker_run
    assert status == pytest.ExitCode.INTERRUPTED, output
    _assert_clean(output)
    name = _marker_gate_file(index)
    line = _one_line(output, f"ERROR collecting {name}", (problem.replace("{file}", name),))
    assert line.startswith("pytest-holistic: gate ")


# -- options and ini values: usage errors -----------------------------------------------------------------------------


def _project(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_caps=capitals())
    pytester.path.joinpath("rules.yaml").write_text(RULES)
    pytester.path.joinpath("a_file").write_text("not a folder")
    pytester.path.joinpath("dangling").symlink_to("/nonexistent/holistic-target")


OPTION_CASES = [
    ("shard_size_0", ["--holistic-shard-size", "0"], ("--holistic-shard-size = 0: must be a whole number >= 1",)),
    ("shard_size_negative", ["--holistic-shard-size=-3"], ("--holistic-shard-size = -3: must be a whole number >= 1",)),
    ("max_instances_0", ["--holistic-max-instances", "0"], ("--holistic-max-instances = 0: must be a whole number >= 1",)),
    ("max_instances_ten", ["--holistic-max-instances", "ten"], ("--holistic-max-instances", "invalid int value: 'ten'")),
    ("batch_size_0", ["--holistic-batch-size", "0"], ("--holistic-batch-size = 0: must be a whole number >= 1 or auto",)),
    ("batch_size_words", ["--holistic-batch-size", "many"], ("--holistic-batch-size = 'many': must be a whole number >= 1",)),
    ("model_empty", ["--model", ""], ("--model is empty", "scripted:PATH")),
    ("model_blank", ["--model", "  "], ("--model is empty",)),
    ("cache_dir_is_a_file", ["--holistic-cache-dir", "a_file"], ("--holistic-cache-dir:", "a_file is a file, not a folder")),
    ("report_dir_is_a_file", ["--holistic-report-dir", "a_file"], ("--holistic-report-dir:", "a_file is a file, not a folder")),
    ("report_dir_under_a_file", ["--holistic-report-dir", "a_file/out"], ("--holistic-report-dir:", "a_file, which is a file")),
    ("report_dir_empty", ["--holistic-report-dir", ""], ("--holistic-report-dir is empty",)),
    ("device_word", ["--holistic-device", "gpu"], ("--holistic-device = 'gpu': use auto, cpu, cuda, cuda:N",)),
    ("device_bad_index", ["--holistic-device", "cuda:x"], ("--holistic-device = 'cuda:x': use auto, cpu, cuda, cuda:N",)),
    ("device_cuda_absent", ["--holistic-device", "cuda"], ("--holistic-device = 'cuda': this machine has no visible CUDA GPU",)),
    ("device_cuda_3_absent", ["--holistic-device", "cuda:3"], ("--holistic-device = 'cuda:3': this machine has no",)),
    ("dtype", ["--holistic-dtype", "fp8"], ("--holistic-dtype = 'fp8': use one of auto, float32, bfloat16, float16",)),
    ("source", ["--holistic-source", "web"], ("--holistic-source", "invalid choice: 'web'")),
    ("toxicity_scorer", ["--holistic-toxicity-scorer", "nope"], ("--holistic-toxicity-scorer: unknown toxicity scorer 'nope'",)),
    (
        "cache_dir_through_broken_link",
        ["--holistic-cache-dir", "dangling/x"],
        ("--holistic-cache-dir:", "goes through", "dangling, which is a broken symbolic link (to /nonexistent/holistic-target)"),
    ),
    (
        "cache_dir_through_broken_link_xdist",
        ["-n", "2", "--holistic-cache-dir", "dangling/x"],
        ("--holistic-cache-dir:", "which is a broken symbolic link", "create the link's target or pass another folder"),
    ),
    ("report_dir_is_broken_link", ["--holistic-report-dir", "dangling"], ("--holistic-report-dir:", "dangling is a broken")),
    (
        "cache_dir_name_too_long",
        ["--holistic-cache-dir", "x" * 300 + "/sub"],
        ("--holistic-cache-dir: cannot look up", "File name too long", "pass a folder this user can reach and write to"),
    ),
    ("gate", ["--holistic-gate", "exact_match >> 1"], ("malformed gate 'exact_match >> 1'",)),
    ("gate_upper_case", ["--holistic-gate", "EXACT_MATCH>=0.5"], ("no metric 'EXACT_MATCH'; did you mean 'exact_match'?",)),
    (
        "gate_two_bounds",
        ["--holistic-gate", "exact_match.lower.upper>=0.5"],
        ("gate 'exact_match.lower.upper>=0.5': two bounds ('lower', 'upper') after 'exact_match'; write one",),
    ),
    (
        "gate_unknown_bound",
        ["--holistic-gate", "exact_match.upr>=0.5"],
        ("unknown bound 'upr' after metric 'exact_match'; did you mean 'exact_match.upper'?",),
    ),
    ("gate_infinite", ["--holistic-gate", "exact_match>=1e999"], ("gate 'exact_match>=1e999': threshold 1e999 is beyond the",)),
    ("revision_empty", ["--holistic-model-revision", ""], ("--holistic-model-revision is empty",)),
]


@pytest.mark.parametrize(("args", "fragments"), [case[1:] for case in OPTION_CASES], ids=[case[0] for case in OPTION_CASES])
def test_bad_option_is_one_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: list[str], fragments: tuple[str, ...]
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no CUDA GPU here, whatever the machine has
    _project(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "scripted:rules.yaml", *args)
    _assert_usage_error(result, fragments)


INI_CASES = [
    ("shard_size", "holistic_shard_size = 0", ("holistic_shard_size in tox.ini = 0: must be a whole number >= 1",)),
    ("batch_size", "holistic_batch_size = zero", ("holistic_batch_size in tox.ini = 'zero': must be a whole number >= 1",)),
    ("source", "holistic_source = web", ("holistic_source in tox.ini = 'web' is not one of local, hub",)),
    ("model", "holistic_model =", ("holistic_model in tox.ini is empty",)),
    ("cache_dir", "holistic_cache_dir = a_file", ("holistic_cache_dir in tox.ini:", "a_file is a file, not a folder")),
    ("report_dir", "holistic_report_dir = a_file", ("holistic_report_dir in tox.ini:", "a_file is a file, not a folder")),
    ("toxicity_scorer", "holistic_toxicity_scorer = nope", ("holistic_toxicity_scorer in tox.ini: unknown toxicity scorer",)),
    ("model_scripted", "holistic_model = scripted:absent.yaml", ("scripted model file absent.yaml does not exist",)),
    ("cache_dir_broken_link", "holistic_cache_dir = dangling/x", ("holistic_cache_dir in tox.ini:", "broken symbolic link")),
    ("gate_upper_case", "holistic_gates = Exact_Match>=0.5", ("no metric 'Exact_Match'; did you mean 'exact_match'?",)),
    ("gate_infinite_optimum", "holistic_gates = abs(exact_match - 1e400) < 1", ("optimum 1e400 is beyond the float range",)),
    *(
        (flag, f"{flag} = maybe", (f"{flag} in tox.ini: invalid truth value 'maybe'; use true or false",))
        for flag in ("holistic_helm_shots", "holistic_stop_early", "holistic_strict_gates")
    ),
]


@pytest.mark.parametrize(("line", "fragments"), [case[1:] for case in INI_CASES], ids=[case[0] for case in INI_CASES])
def test_bad_ini_value_is_one_usage_error(pytester: pytest.Pytester, line: str, fragments: tuple[str, ...]) -> None:
    _project(pytester)
    pytester.makefile(".ini", tox=f"[pytest]\n{line}\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    _assert_usage_error(result, fragments)


# -- scripted rules files: usage errors naming the file and the field ------------------------------------------------

SCRIPT_CASES = [
    ("missing", "absent.yaml", None, ("scripted model file absent.yaml does not exist",)),
    ("unknown_key", "foo.yaml", b"foo: bar\n", ("foo.yaml: unknown key 'foo'", "known keys: generate, loglikelihood")),
    ("misspelt_key", "typo.yaml", b"generat:\n  France: Paris\n", ("typo.yaml: unknown key 'generat'; did you mean 'generate'",)),
    ("generate_list", "list.yaml", b"generate: [a, b]\n", ("list.yaml: 'generate' must be a mapping of prompt substring",)),
    ("generate_number", "num.yaml", b"generate:\n  France: 5\n", ("num.yaml: generate['France'] must be an answer string",)),
    ("generate_key_number", "key.yaml", b"generate:\n  1: one\n", ("key.yaml: 'generate' key 1 must be a non-empty string",)),
    ("loglikelihood_text", "ll.yaml", b"loglikelihood:\n  Positive: high\n", ("ll.yaml: loglikelihood['Positive'] must be",)),
    ("default_number", "default.yaml", b"default: 3\n", ("default.yaml: 'default' must be a string, got int 3",)),
    ("batch_size_0", "batch.yaml", b"batch_size: 0\n", ("batch.yaml: 'batch_size' must be a whole number >= 1, got 0",)),
    ("delay_negative", "delay.yaml", b"delay: -1\n", ("delay.yaml: 'delay' must be a number of seconds >= 0, got -1",)),
    ("yaml_syntax", "syntax.yaml", b"generate:\n  Japan: [Tokyo\n", ("scripted model file syntax.yaml:3: not valid YAML",)),
    ("json_syntax", "rules.json", b'{"generate": {"France": " Paris",}}\n', ("scripted model file rules.json:1: not valid",)),
    ("empty", "empty.yaml", b"", ("scripted model file empty.yaml is empty",)),
    ("top_level_list", "top.yaml", b"- France\n- Paris\n", ("top.yaml must hold a mapping", "got list")),
    ("latin1", "latin1.yaml", b"generate:\n  caf\xe9: Paris\n", ("latin1.yaml is not UTF-8", "save it as UTF-8")),
    ("no_path", "", None, ("--model 'scripted:' names no file",)),
]


@pytest.mark.parametrize(
    ("name", "content", "fragments"), [case[1:] for case in SCRIPT_CASES], ids=[case[0] for case in SCRIPT_CASES]
)
def test_bad_scripted_rules_file_is_one_usage_error(
    pytester: pytest.Pytester, name: str, content: bytes | None, fragments: tuple[str, ...]
) -> None:
    pytester.makepyfile(test_caps=capitals())
    if content is not None:
        pytester.path.joinpath(name).write_bytes(content)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", f"scripted:{name}")
    _assert_usage_error(result, fragments)


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/null").exists(), reason="needs FIFOs and /dev/null")
@pytest.mark.parametrize("kind", ["fifo", "dev_null"])
def test_scripted_rules_path_that_is_not_a_regular_file(pytester: pytest.Pytester, kind: str) -> None:
    """A FIFO (whose read would block) or a device exists: say what it is instead of 'does not exist'."""
    pytester.makepyfile(test_caps=capitals())
    if kind == "fifo":
        os.mkfifo(pytester.path / "rules.yaml")
    path = "rules.yaml" if kind == "fifo" else "/dev/null"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", f"scripted:{path}", timeout=60)
    _assert_usage_error(result, (f"scripted model file {path} is not a regular file", "pass --model scripted:PATH"))


def test_folder_check_turns_an_os_error_into_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder on the way that this user may not search makes ``exists()`` raise (root searches anything: simulate it)."""
    from pytest_holistic.errors import UserError
    from pytest_holistic.settings import _check_folder

    locked = tmp_path / "cache0"
    real_exists = Path.exists

    def exists(path: Path, *args: object, **kwargs: object) -> bool:
        if locked in path.parents:
            raise PermissionError(13, "Permission denied", str(path))
        return real_exists(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "exists", exists)
    with pytest.raises(UserError) as raised:
        _check_folder(locked / "sub", "--holistic-cache-dir")
    message = str(raised.value)
    fix = "pass a folder this user can reach and write to"
    assert message == f"--holistic-cache-dir: cannot look up {locked / 'sub'}: Permission denied; {fix}"
    assert raised.value.__context__ is None  # raised outside the except block: no "During handling" chain


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may look into any folder")
def test_cache_dir_under_an_unsearchable_folder_is_one_usage_error(pytester: pytest.Pytester) -> None:
    _project(pytester)
    locked = pytester.mkdir("cache0")
    locked.chmod(0)
    try:
        args = ("--model=scripted:rules.yaml", "--holistic-cache-dir=cache0/x")
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    finally:
        locked.chmod(0o755)
    _assert_usage_error(result, ("--holistic-cache-dir: cannot look up", "cache0/x: Permission denied"))


# -- models that cannot load: one line, once, and the run stops ------------------------------------------------------


def _assert_load_error(result: pytest.RunResult, fragments: tuple[str, ...]) -> None:
    """Exit 2 after one error; the error's first line is the whole message, and it is printed once.

    (The summary that the run prints after the error section may follow it, so the section is not one line.)
    """
    output = _output(result)
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    _assert_clean(output)
    result.assert_outcomes(errors=1)
    body = _sections(output)["ERROR at setup of test_capitals[fr]"]
    assert body[0].startswith("pytest-holistic: "), body
    for fragment in fragments:
        assert fragment in body[0], f"{fragment!r} not in {body[0]!r}"
    # pytest's short summary repeats the message (cut to the terminal width, except where CI is set): not counted.
    summary = re.compile(r"^(ERROR|FAILED) \S+ - ")
    printed = "\n".join(line for line in output.splitlines() if not summary.match(line))
    assert printed.count(fragments[-1]) == 1, f"{fragments[-1]!r} is printed more than once:\n{output}"


def test_model_folder_without_config_json(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_caps=capitals())
    pytester.mkdir("m").joinpath("model.safetensors").write_bytes(b"weights")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "./m")
    _assert_load_error(result, ("model folder ./m has no config.json", "pass a folder written by save_pretrained()"))


def test_model_folder_with_corrupt_weights(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    pytester.makepyfile(test_caps=capitals())
    folder = pytester.path / "broken"
    shutil.copytree(tiny_gpt2, folder)
    (folder / "model.safetensors").write_bytes(b"\x00 not safetensors")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "./broken", timeout=300)
    _assert_load_error(result, ("could not load model './broken'", "the folder is incomplete or its files are corrupt"))


def test_model_folder_without_tokenizer_files(pytester: pytest.Pytester, tiny_gpt2: Path) -> None:
    pytester.makepyfile(test_caps=capitals())
    folder = pytester.mkdir("weights-only")
    for name in ("config.json", "model.safetensors"):  # transformers builds a GPT-2 tokenizer with no vocabulary here
        shutil.copyfile(tiny_gpt2 / name, folder / name)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "./weights-only", timeout=300)
    _assert_load_error(
        result,
        (
            "model folder ./weights-only has no tokenizer files (tokenizer.json, vocab.json with merges.txt,",
            "save the tokenizer into it with tokenizer.save_pretrained()",
        ),
    )


def _hub_unreachable(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """An empty HF cache and a hub that refuses connections at once (nothing listens on the discard port)."""
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    for name in ("HF_HUB_CACHE", "HF_DATASETS_CACHE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)


def test_hub_name_not_cached_and_hub_unreachable_fails_at_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hub_unreachable(monkeypatch, pytester.path / "hf")
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "holistic-test/absent", timeout=120)
    _assert_load_error(
        result,
        (
            "model 'holistic-test/absent' is not in the local HF cache and the hub (http://127.0.0.1:9) cannot be reached",
            "download it where there is network, or pass a local folder",
        ),
    )
    assert "Retry" not in _output(result)


def test_hub_dataset_when_the_hub_cannot_be_reached_is_one_collection_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hub_unreachable(monkeypatch, pytester.path / "hf")
    pytester.makepyfile(
        test_hub="""
        import pytest
        from pytest_holistic import Instance, Scenario, hf

        local = [Instance(id="a", input="x", references=("y",))]
        qa = Scenario("qa", local, hub=hf("holistic-test/absent-dataset"))

        @pytest.mark.holistic(qa)
        def test_it(completion):
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--co", "--holistic-source", "hub", timeout=120)
    output = _output(result)
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    _assert_clean(output)
    fragments = (
        "could not load dataset 'holistic-test/absent-dataset'",
        "the hub (http://127.0.0.1:9) cannot be reached",
        "or use --holistic-source=local",
    )
    _one_line(output, "ERROR collecting test_hub.py", fragments)
    assert "Retry" not in output


def test_missing_model_folder(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "./models/nothing-here")
    _assert_load_error(result, ("model folder './models/nothing-here' does not exist or is not a folder",))


def test_unknown_model_scheme(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "nosuch:thing")
    _assert_load_error(result, ("no model backend handles 'nosuch' in --model 'nosuch:thing'",))


def test_broken_model_behind_holistic_model_fails_the_test_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.mkdir("m").joinpath("weights.bin").write_bytes(b"weights")
    pytester.makepyfile(
        test_direct="""
        from pytest_holistic import GenerationRequest

        def test_direct(holistic_model):
            holistic_model.generate([GenerationRequest("hi", 2, ())])
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "./m")
    output = _output(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output
    _assert_clean(output)
    _one_line(output, "test_direct", ("pytest-holistic: test_direct.py:4: model folder ./m has no config.json",))


# -- record(): a value that is not a finite number ---------------------------------------------------------------------

UNDEFINED = "record nothing for an instance where the score is undefined"


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        ("record(note='cat')", "record(): metric 'note' must be a number, got 'cat'"),
        ("record({'score': None})", "record(): metric 'score' must be a number, got None"),
        ("record('cat')", "record() takes Score objects (from pytest_holistic.metrics) or name=value, got 'cat'"),
        ("record(my_score=float('inf'))", f"record(): metric 'my_score' must be a finite number, got inf; {UNDEFINED}"),
        ("record({'my_score': float('-inf')})", "record(): metric 'my_score' must be a finite number, got -inf"),
        ("record(my_score=float('nan'))", f"record(): metric 'my_score' must be a finite number, got nan; {UNDEFINED}"),
        ("record(my_score=10**400)", "record(): metric 'my_score' must be a finite number, got an int of about 401 digits"),
        ("record(my_score=10**5000)", "record(): metric 'my_score' must be a finite number, got an int of about 5001 digits"),
    ],
    ids=["named-text", "mapping-none", "positional-text", "inf", "minus-inf", "nan", "int-overflow", "int-beyond-str-limit"],
)
def test_record_of_a_non_number_fails_the_item_in_one_line(pytester: pytest.Pytester, call: str, fragment: str) -> None:
    pytester.path.joinpath("rules.yaml").write_text(RULES)
    pytester.makepyfile(
        test_rec=f"""
        import pytest
        from pytest_holistic import Instance, scenario

        @scenario
        def capitals():
            yield Instance(id="fr", input="The capital of France is", references=("Paris",))

        @pytest.mark.holistic(capitals, max_train_instances=0, metrics=("exact_match",))
        def test_it(completion, record):
            {call}
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--model", "scripted:rules.yaml")
    output = _output(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output
    _assert_clean(output)
    result.assert_outcomes(failed=1)
    _one_line(output, "test_it[fr]", (fragment,))
