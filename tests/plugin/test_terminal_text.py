"""Control characters in data (ANSI/OSC sequences, bidirectional overrides) reach the terminal as visible escapes."""

from __future__ import annotations

import json

# The report's bootstrap imports numpy. Import it here, not first inside an in-process run: pytester unloads the
# modules a run imported, and numpy's C core cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest

from pytest_holistic.printable import printable

NORTH = "\x1b]0;owned\x07north\x1b[31m"  # retitles the terminal window, then turns the text red
SOUTH = "south\u202e"  # a right-to-left override: what follows prints reversed
ROWS = [
    {"id": "fr\x1b[2J", "input": "The capital of France is", "references": ["Paris"], "group": NORTH},
    {"id": "es", "input": "The capital of Spain is", "references": ["Madrid"], "group": SOUTH},
]
SUITE = """
import pytest
from pytest_holistic import Scenario, jsonl, metrics

caps = Scenario("caps\\x1b[5m", local=jsonl("caps.jsonl"))

@pytest.mark.holistic(caps, adapter="generation", max_tokens=5, stop=("."), max_train_instances=0, metrics=("exact_match",))
def test_caps(instance, completion, record):
    record(metrics.quasi_exact_match(completion.text, instance.references))
"""


def test_printable_escapes_controls_and_keeps_other_text() -> None:
    assert printable("a\x1b[31mb\x07c\r\n\td\x7f\x9be\u202ef") == "a\\x1b[31mb\\x07c\\r\\n\\td\\x7f\\x9be\\u202ef"
    assert printable("café ↑ 東京 [0.1, 0.9]") == "café ↑ 東京 [0.1, 0.9]"


def test_group_and_scenario_names_from_data_are_escaped_in_the_summary(pytester: pytest.Pytester, read_report) -> None:
    pytester.path.joinpath("caps.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    pytester.path.joinpath("rules.yaml").write_text('generate: {"France": " Paris", "Spain": " Rome"}\n')
    pytester.makepyfile(test_caps=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--model", "scripted:rules.yaml")
    result.assert_outcomes(passed=2)
    output = result.stdout.str() + result.stderr.str()
    assert not any(character in output for character in "\x1b\x07\u202e")
    result.stdout.fnmatch_lines(
        [
            "caps\\x1b[5m (generation, local; 2 passed)",
            "  groups   exact_match: worst south\\u202e 0.000, best \\x1b]0;owned\\x07north\\x1b[31m 1.000, gap 1.000",
        ]
    )
    (run,) = read_report(pytester.path, "scripted_rules.yaml")["runs"]  # the report keeps the data as it is
    assert {record["instance"]["group"] for record in run["instances"]} == {NORTH, SOUTH}
