"""Every adapter method on a tiny T5 through pytest: ``-n 2`` equals ``-n 0``, a warm rerun loads nothing, the
determinism canary passes, and the report says an encoder-decoder answered.

That each request equals a plain transformers loop is ``tests/models/test_seq2seq.py``; here the same requests
arrive through the adapters, the cache and xdist.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_holistic.methods import METHODS
from tests.plugin.suites import YES_NO, capitals
from tests.plugin.test_scoring_suites import CALIBRATED, DOCS, LANGUAGE, RANKING, YES_NO_ROWS, _queries, _write
from tests.plugin.test_xdist import _close_floats, _stable

ITEMS = 4 + 3 * len(YES_NO_ROWS) + len(DOCS) + 3  # capitals, three yes/no suites, documents, queries


def _every_method(pytester: pytest.Pytester) -> None:
    _write(pytester, "yes_no.jsonl", YES_NO_ROWS)
    _write(pytester, "docs.jsonl", DOCS)
    _write(pytester, "queries.jsonl", _queries())
    pytester.makepyfile(
        test_caps=capitals(),
        test_separate=YES_NO,
        test_joint=YES_NO.replace("multiple_choice_separate", "multiple_choice_joint").replace('"yes_no"', '"yes_no_joint"'),
        test_calibrated=CALIBRATED.replace('"yes_no"', '"yes_no_calibrated"'),
        test_docs=LANGUAGE,
        test_queries=RANKING,
    )


def _answers(report: dict) -> dict:
    """The report without timings and without where answers came from: a scoring suite may replay what another suite
    of the same session asked first (the three yes/no suites share requests), which depends on which worker ran which."""
    stable = _stable(report)
    for run in stable["runs"]:
        run.pop("replayed_from_cache", None)
        for record in run["instances"]:
            record["completion"].pop("cached", None)
    return stable


def _report(root: Path, folder: str) -> dict:
    return json.loads((root / folder / "tiny-t5" / "latest" / "report.json").read_text())


def test_every_adapter_method_runs_on_an_encoder_decoder_and_two_workers_match_serial(
    pytester: pytest.Pytester, tiny_t5: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every process runs one thread, but a suite's requests may be computed in another batch shape in each run (a
    # yes/no suite replays what another one asked first when both ran in one process): numbers agree to rounding.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    _every_method(pytester)
    common = ("--model", str(tiny_t5), "-p", "no:randomly", "-p", "no:cacheprovider")
    serial = pytester.runpytest_subprocess(*common, "--holistic-report-dir", "serial", timeout=600)
    serial.assert_outcomes(passed=ITEMS)
    assert "Traceback" not in serial.stdout.str()
    parallel = pytester.runpytest_subprocess(*common, "-n", "2", "--holistic-report-dir", "parallel", timeout=600)
    parallel.assert_outcomes(passed=ITEMS)
    one, two = _report(pytester.path, "serial"), _report(pytester.path, "parallel")
    assert _close_floats(_answers(one), _answers(two)) == []
    assert {run["adapter"]["method"] for run in one["runs"]} == set(METHODS)  # every adapter method there is
    assert one["complete"] and two["complete"]
    model = one["model"]
    assert model["variant"]["architecture"] == "encoder-decoder"
    assert model["details"]["model_kind"] == "encoder-decoder"
    assert model["details"]["architecture"] == "T5ForConditionalGeneration"
    # Every instance answered: texts for generation, scores for the scoring methods, bits for documents.
    for run in one["runs"]:
        assert all(record["completion"] for record in run["instances"]), run["adapter"]["method"]


def test_a_warm_rerun_on_an_encoder_decoder_answers_from_the_cache(pytester: pytest.Pytester, tiny_t5: Path) -> None:
    _every_method(pytester)
    common = ("--model", str(tiny_t5), "-p", "no:cacheprovider")
    pytester.runpytest_subprocess(*common, "--holistic-check-determinism", "1", timeout=600).assert_outcomes(passed=ITEMS)
    cold = _report(pytester.path, "reports")
    warm_run = pytester.runpytest_subprocess(*common, timeout=600)
    warm_run.assert_outcomes(passed=ITEMS)
    warm = _report(pytester.path, "reports")
    assert warm["workers"]["main"]["device"] is None, "a warm rerun loads no model"
    assert warm["model"]["variant"] == cold["model"]["variant"]
    records = [record for run in warm["runs"] for record in run["instances"]]
    assert all(record["execution"]["cached"] for record in records)
    answers = lambda report: [
        {k: v for k, v in r["completion"].items() if k not in ("seconds", "cached")} for run in report["runs"] for r in run["instances"]
    ]
    assert answers(warm) == answers(cold)
