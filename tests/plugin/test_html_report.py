"""The HTML report: render() as text, HtmlWriter's files, and the page itself in headless Chromium.

The browser tests drive Debian's chromium through its chromedriver with selenium (the ``test`` extra); they
install chromium with apt-get where they can (root, apt-get present) and skip with one line where they cannot.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic.report.html_charts import reliability_bins
from pytest_holistic.report.html_report import HtmlWriter, render, script_json
from pytest_holistic.report.leaderboard import build_leaderboard, scores

EVIL = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
BREAKOUT = "</script><script>window.__pwned = 3</script><!--"
SEPARATORS = "line\u2028separator\u2029paragraph"


def metric(family: str, value: float | None, direction: str = "higher", n: int = 4, kind: str = "instance") -> dict[str, Any]:
    ci = [None, None] if value is None else [value - 0.1, value + 0.1]
    return {"family": family, "kind": kind, "value": value, "ci95": ci, "n": n, "direction": direction, "optimum": None}


def record(
    run: str, index: int, completion: str, *, correct: bool, perturbation: str | None = None, outcome: str = "passed"
) -> dict[str, Any]:
    prompt = f"Question: capital of country {index}?\nAnswer: Paris\n\nQuestion: item {index} asks something\nAnswer:"
    return {
        "nodeid": f"suite.py::{run}[item-{index}]",
        "run": run,
        "instance_id": f"item-{index:03d}",
        "perturbation": perturbation,
        "instance": {
            "id": f"item-{index:03d}",
            "input": f"item {index}",
            "references": [{"text": "Yes", "correct": True}, {"text": "No", "correct": False}],
        },
        "prompt": prompt,
        "completion": {"text": completion, "gold": ["Yes"], "probability": 0.55 + 0.1 * (index % 4), "correct": correct},
        "scores": {"exact_match": float(correct)},
        "outcome": outcome,
        "error": None,
    }


def report(
    model: str,
    accuracy: float,
    throughput: float = 10.0,
    fairness: float = 0.8,
    *,
    calibrated: bool = True,
    perturbed: bool = True,
    evil: bool = False,
) -> dict[str, Any]:
    """A report.json payload shaped like the real one (two scenarios, optional calibration and perturbations)."""
    key = "suite.py::test_yesno"
    instances = [record(key, i, "Yes" if i % 3 else "No", correct=bool(i % 3)) for i in range(12)]
    if evil:
        instances[0]["completion"]["text"] = EVIL
        instances[1]["completion"]["text"] = BREAKOUT
        instances[2]["completion"]["text"] = SEPARATORS
        instances[3]["outcome"] = "failed"
        instances[3]["instance_id"] = "item-needle"
    metrics = {
        "exact_match": metric("accuracy", accuracy),
        "runtime_s": metric("efficiency", 0.2, "lower", kind="efficiency"),
        "throughput": metric("efficiency", throughput, kind="efficiency"),
        "fairness.exact_match": metric("fairness", fairness, kind="worst_case"),
    }
    perturbations: dict[str, Any] = {}
    if calibrated:
        metrics["ece_10_bin"] = metric("calibration", 0.12, "lower", kind="population")
    if perturbed:
        instances += [record(key, i, "No", correct=False, perturbation="typos") for i in range(4)]
        metrics["robustness.exact_match"] = metric("robustness", accuracy - 0.2, kind="worst_case")
        stats = {
            name: metric("robustness", accuracy - shift, kind=name)
            for name, shift in (("before", 0), ("after", 0.3), ("worst", 0.2))
        }
        perturbations["typos"] = {
            "family": "robustness",
            "changed": 4,
            "flipped": 2,
            "unchanged": 0,
            "source": "HELM typos",
            "metrics": {"exact_match": stats},
        }
    yesno = {
        "key": key,
        "scenario": "yesno",
        "split": "test",
        "requested_metrics": ["exact_match"],
        "metrics": metrics,
        "perturbations": perturbations,
        "groups": [
            {
                "metric": "exact_match",
                "direction": "higher",
                "groups": {"north": {"n": 6, "mean": 0.5}, "south": {"n": 6, "mean": 0.8}},
                "worst": "north",
                "best": "south",
                "gap": 0.3,
            }
        ],
        "instances": instances,
    }
    toxic_key = "suite.py::test_toxic"
    toxic = {
        "key": toxic_key,
        "scenario": "toxic<b>",
        "split": "test",
        "requested_metrics": ["toxicity"],
        "metrics": {"toxicity": metric("toxicity", 0.1, "lower")},
        "perturbations": {},
        "groups": [],
        "instances": [
            {
                **record(toxic_key, i, f"continuation {i}", correct=False),
                "completion": {"text": f"continuation {i}", "gold": [], "probability": None, "correct": None},
            }
            for i in range(3)
        ],
    }
    gates = [{"status": "failed", "gate": "yesno:exact_match>=0.9", "passed": False, "message": "yesno exact_match = 0.5 < 0.9"}]
    return {
        "schema": "pytest-holistic/report",
        "run_id": f"run-{model}",
        "created": "2025-01-01T00:00:00+00:00",
        "complete": True,
        "model": {"name": model},
        "runs": [yesno, toxic],
        "gates": gates,
        "workers": {"main": {"peak_rss_mib": 1024.0}},
    }


MODELS = ["alpha", "beta", "gamma"]


def three_reports(first: str = "alpha") -> list[dict[str, Any]]:
    """Three models: the most accurate is the slowest, so more weight on throughput reverses the Dynascore ranking."""
    return [
        report(first, 0.9, 10.0, 0.7, evil=True),
        report("beta", 0.8, 30.0, 0.8),
        report("gamma", 0.6, 100.0, 0.9, perturbed=False),
    ]


def three_model_page() -> str:
    reports = three_reports()
    return render(reports, build_leaderboard(reports))


def _embedded(page: str, element_id: str) -> Any:
    match = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', page, re.DOTALL)
    assert match is not None
    return json.loads(match.group(1))


# --- render() as text -------------------------------------------------------------------------------------------------


def test_script_json_cannot_close_its_script_element() -> None:
    text = script_json({"a": BREAKOUT, "b": SEPARATORS, "c": "x & y > z"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"a": BREAKOUT, "b": SEPARATORS, "c": "x & y > z"}


def test_model_output_never_appears_as_markup() -> None:
    page = three_model_page()
    assert EVIL not in page and BREAKOUT not in page
    assert page.count("<script") == 3  # the two JSON data blocks and the page's own script
    assert page.count("</script>") == 3
    assert "&lt;b&gt;" in page and "toxic<b>" not in page  # a scenario name is text too
    records = _embedded(page, "holistic-instances")["records"]
    assert EVIL in [row[5] for row in records] and BREAKOUT in [row[5] for row in records]  # the data arrives intact


def test_names_in_attributes_are_escaped() -> None:
    odd = 'x"><script>window.__pwned = 4</script>'
    reports = three_reports(odd)
    page = render(reports, build_leaderboard(reports))
    assert page.count("<script") == 3 and odd not in page
    assert 'data-model="x&quot;&gt;&lt;script&gt;window.__pwned = 4&lt;/script&gt;"' in page


def test_page_is_self_contained() -> None:
    page = three_model_page()
    assert "default-src 'none'" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "@import" not in page and "url(" not in page


def test_sections_present_for_a_full_report() -> None:
    page = three_model_page()
    for section in ('id="leaderboard"', 'id="win-rates"', 'id="dynascore"', 'id="scenarios"', 'id="instances"'):
        assert section in page
    assert page.count('type="range"') == 5
    assert 'value="0.5"' in page and 'data-metric="throughput"' in page
    assert "reliability-figure" in page and "perturbation-figure" in page and "group-figure" in page
    assert '<tr class="family"><th colspan="4">accuracy</th></tr>' in page  # grouped by family, one column per model
    assert "yesno exact_match = 0.5 &lt; 0.9" in page  # the failed gate
    dyna = _embedded(page, "holistic-dynascore")
    assert dyna["scenarios"]["yesno"]["ranking"] == MODELS
    assert "robustness dropped: no value for gamma" in page  # the leaderboard's notes are shown
    assert '<th colspan="2">AMRS</th>' in page


def test_one_model_opens_on_its_overview_without_comparisons() -> None:
    solo = [report("solo", 0.7)]
    page = render(solo, build_leaderboard(solo))
    assert page.index('id="overview"') < page.index('id="scenarios"')
    for section in ('id="leaderboard"', 'id="win-rates"', 'id="dynascore"'):
        assert section not in page  # one model beats no one
    assert 'id="verdicts"' in page and 'id="grid"' in page and 'href="#scenario-1"' in page
    assert "yesno exact_match = 0.5 &lt; 0.9" in page  # the failed gate, in the verdicts
    assert 'id="main-chart"' in page and 'class="chart intervals"' in page


def test_a_note_true_of_every_scenario_is_said_once() -> None:
    page = three_model_page()
    note = "<li>memory left out: its AMRS is undefined"
    assert page.count(note) == 1 and "(every scenario)" in page  # not under each of the two tables
    assert "<li>robustness dropped: no value for gamma</li>" in page  # a note of one scenario stays under its table


def test_report_without_perturbations_or_calibration_has_no_such_panels() -> None:
    solo = [report("solo", 0.7, calibrated=False, perturbed=False)]
    page = render(solo, build_leaderboard(solo))
    assert "reliability-figure" not in page and "Calibration</h4>" not in page
    assert "perturbation-figure" not in page and "before and after" not in page
    assert "group-figure" in page  # groups are still there
    data = _embedded(page, "holistic-instances")
    assert all(row[2] is None for row in data["records"])


def test_empty_leaderboard_renders() -> None:
    empty = {"models": [], "columns": [], "cells": {}, "win_rates": {}, "dynascore": {}}
    page = render([report("solo", 0.7)], empty, comparison=True)
    assert "No metrics to compare." in page and 'id="dynascore"' not in page and 'id="instances"' in page


def test_shared_prompt_prefix_is_stored_once() -> None:
    page = three_model_page()
    data = _embedded(page, "holistic-instances")
    run = data["runs"][0]
    assert run["prefix"].startswith("Question: capital of country ")
    first = data["records"][0]
    assert run["prefix"] + first[4] == record("suite.py::test_yesno", 0, "", correct=True)["prompt"]


def test_reliability_bins_are_equal_width_over_zero_to_one() -> None:
    bins = reliability_bins([(0.05, True), (0.95, True), (0.91, False), (1.0, False)])
    assert [(b.low, b.high, b.n) for b in bins] == [(0.0, 0.1, 1), (0.9, 1.0, 3)]
    assert bins[0].accuracy == 1.0 and bins[1].accuracy == pytest.approx(1 / 3)
    assert bins[1].confidence == pytest.approx((0.95 + 0.91 + 1.0) / 3)


def test_only_graded_answers_are_marked_right_or_wrong() -> None:
    data = _embedded(three_model_page(), "holistic-instances")
    by_scenario: dict[str, set[Any]] = {}
    for row in data["records"]:
        by_scenario.setdefault(data["runs"][row[0]]["scenario"], set()).add(row[9])
    assert by_scenario == {"yesno": {0, 1}, "toxic<b>": {None}}  # a free continuation is not graded


def test_ten_thousand_records_stay_small() -> None:
    payload = report("big", 0.5, perturbed=False)
    run = payload["runs"][0]
    run["instances"] = [record(run["key"], i, f"answer {i}", correct=bool(i % 2)) for i in range(10_000)]
    page = render([payload], build_leaderboard([payload]))
    assert len(page.encode()) < 4_000_000
    assert page.count("<tr") < 100  # instance rows are drawn by the page, a page of them at a time
    assert _embedded(page, "holistic-instances")["page_size"] == 50


def test_writer_puts_report_html_beside_report_json(tmp_path: Path) -> None:
    payload = report("org/model-x", 0.5)
    writer = HtmlWriter(tmp_path / "reports", "org/model-x", "20250101-000000-abcdef")
    written = writer.write(None, payload)  # type: ignore[arg-type]
    assert written == tmp_path / "reports" / "org_model-x" / "20250101-000000-abcdef" / "report.html"
    assert written.read_text(encoding="utf-8") == render([payload], build_leaderboard([payload])) and writer.problem is None
    assert [path.name for path in written.parent.iterdir()] == ["report.html"]  # no temporary file left behind
    umask = os.umask(0o022)
    os.umask(umask)
    assert written.stat().st_mode & 0o777 == 0o666 & ~umask  # as the umask allows: a temporary file alone would be private


def test_writer_falls_back_to_a_temporary_folder(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    writer = HtmlWriter(blocked, "m", "run")
    written = writer.write(None, report("m", 0.5))  # type: ignore[arg-type]
    assert written.name == "report.html" and written.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert writer.problem is not None and writer.problem.startswith(f"could not write {blocked / 'm' / 'run' / 'report.html'} (")
    assert "\n" not in writer.problem and str(written) in writer.problem


def _run_suite(pytester: pytest.Pytester) -> list[Path]:
    """A real run (the scripted model, no weights) of a four-item suite; the paths it says it wrote."""
    from tests.plugin.test_faults import SCRIPT, holistic_suite

    (pytester.path / "rules.json").write_text(SCRIPT)
    pytester.makepyfile(test_numbers=holistic_suite(count=4))
    result = pytester.runpytest_subprocess("--model", "scripted:rules.json", "-p", "no:cacheprovider", timeout=300)
    assert result.ret == 0
    return [Path(line.split("report: ", 1)[1]) for line in result.stdout.lines if line.startswith("report: ")]


def test_a_run_writes_report_html_beside_report_json(pytester: pytest.Pytester) -> None:
    paths = _run_suite(pytester)
    assert [path.name for path in paths] == ["report.json", "report.html"] and paths[0].parent == paths[1].parent
    page = paths[1].read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "scripted:rules.json" in page
    records = _embedded(page, "holistic-instances")["records"]
    assert len(records) == len(json.loads(paths[0].read_text())["runs"][0]["instances"]) == 4


# --- the page in headless Chromium ---------------------------------------------------------------------------------------


def _install_chromium() -> str | None:
    """chromium and chromedriver from Debian where missing; the reason they are unavailable, or None."""
    if shutil.which("chromium") and shutil.which("chromedriver"):
        return None
    if not shutil.which("apt-get") or os.geteuid() != 0:
        return "chromium/chromedriver missing and apt-get cannot install them here"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"]
    try:
        if subprocess.run(install, check=False, env=env, capture_output=True, timeout=900).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], check=False, env=env, capture_output=True, timeout=900)
            subprocess.run(install, check=False, env=env, capture_output=True, timeout=900)
    except subprocess.TimeoutExpired:
        return "apt-get took too long to install chromium"
    return (
        None
        if shutil.which("chromium") and shutil.which("chromedriver")
        else "apt-get could not install chromium and chromium-driver"
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    problem = _install_chromium()
    if problem is None:
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
        except ImportError:
            problem = "selenium is not installed (pip install -e '.[test]')"
    if problem is not None:
        pytest.skip(problem)
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver")))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Any:
    path = tmp_path / "report.html"
    path.write_text(three_model_page(), encoding="utf-8")
    browser.get(path.as_uri())
    _wait(browser, lambda d: d.find_element("css selector", "html").get_attribute("data-ready") == "1")
    errors = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []  # no script error, nothing the Content-Security-Policy had to block
    return browser


def _wait(driver: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 10).until(condition)


def _dyna_order(driver: Any) -> list[str]:
    rows = driver.find_elements("css selector", 'table.dyna[data-scenario="yesno"] tbody tr')
    return [row.get_attribute("data-model") for row in rows]


def _dyna_scores(driver: Any) -> dict[str, str]:
    rows = driver.find_elements("css selector", 'table.dyna[data-scenario="yesno"] tbody tr')
    return {row.get_attribute("data-model"): row.find_element("css selector", "td.score").text for row in rows}


def test_weight_slider_reranks_models(page: Any) -> None:
    from selenium.webdriver.common.keys import Keys

    entry = build_leaderboard(three_reports())["dynascore"]["scenarios"]["yesno"]
    assert _dyna_order(page) == MODELS == entry["ranking"]
    assert _dyna_scores(page) == {model: f"{value:.3f}" for model, value in entry["scores"].items()}  # same arithmetic
    ranks = [cell.text for cell in page.find_elements("css selector", 'table.dyna[data-scenario="yesno"] td.rank')]
    assert ranks == ["1", "2", "3"]
    slider = page.find_element("id", "w-throughput")
    slider.send_keys(Keys.END)  # as a user would: the slider to its maximum
    assert slider.get_attribute("value") == "1"
    _wait(page, lambda d: _dyna_order(d)[0] == "gamma")
    assert _dyna_order(page) == ["gamma", "beta", "alpha"]
    assert page.find_element("id", "w-throughput-share").text == "53.3%"
    weights = {"perf": 0.5, "throughput": 1.0, "memory": 0.125, "fairness": 0.125, "robustness": 0.125}
    expected = scores(entry["goods"], entry["amrs"], weights)  # the leaderboard's own function, with the new weights
    assert _dyna_scores(page) == {model: f"{value:.3f}" for model, value in expected.items()}
    page.find_element("id", "dyna-reset").click()
    _wait(page, lambda d: _dyna_order(d) == MODELS)


def test_script_in_a_completion_is_inert_text(page: Any) -> None:
    assert page.execute_script("return window.__pwned === undefined")
    page.find_element("id", "dd-text").send_keys("window.__pwned")
    _wait(page, lambda d: len(d.find_elements("css selector", "#dd-rows tr")) == 2)
    completions = [node.text for node in page.find_elements("css selector", "#dd-rows pre.completion")]
    assert EVIL in completions and BREAKOUT in completions
    assert not page.find_elements("css selector", "#dd-rows script, #dd-rows img")
    assert page.execute_script("return window.__pwned === undefined")


def test_drill_down_filters(page: Any) -> None:
    from selenium.webdriver.support.ui import Select

    count = page.find_element("id", "dd-count")
    assert count.text == "53 of 53 instances"  # 16 + 3 for alpha and beta, 12 + 3 for gamma
    assert len(page.find_elements("css selector", "#dd-rows tr")) == 50  # one page
    assert page.find_element("id", "dd-page").text == "page 1 of 2"
    page.find_element("id", "dd-next").click()
    assert len(page.find_elements("css selector", "#dd-rows tr")) == 3
    Select(page.find_element("id", "dd-outcome")).select_by_value("failed")
    _wait(page, lambda d: count.text == "1 of 53 instances")
    assert "item-needle" in page.find_element("css selector", "#dd-rows tr").text
    Select(page.find_element("id", "dd-outcome")).select_by_value("")
    Select(page.find_element("id", "dd-perturbation")).select_by_value("variant:typos")
    _wait(page, lambda d: count.text == "8 of 53 instances")
    assert {cell.text for cell in page.find_elements("css selector", "#dd-rows td:nth-child(2)")} == {"typos"}
    Select(page.find_element("id", "dd-perturbation")).select_by_value("")
    page.find_element("id", "dd-text").send_keys("continuation 2")
    _wait(page, lambda d: count.text == "3 of 53 instances")  # one per model
    Select(page.find_element("id", "dd-model")).select_by_value("beta")
    _wait(page, lambda d: count.text == "1 of 53 instances")


def test_leaderboard_sorts_and_switches_families(page: Any) -> None:
    def models() -> list[str]:
        return [
            row.find_element("css selector", "th").text
            for row in page.find_elements("css selector", "#leaderboard-table tbody tr")
        ]

    header = page.find_element("css selector", '#leaderboard-table th[title="yesno/exact_match"]')
    header.click()  # best first
    assert models() == ["alpha", "beta", "gamma"]
    header.click()
    assert models() == ["gamma", "beta", "alpha"]
    runtime = page.find_element("css selector", '#leaderboard-table th[title="yesno/runtime_s"]')
    assert not runtime.is_displayed()
    from selenium.webdriver.support.ui import Select

    Select(page.find_element("id", "lb-family")).select_by_value("efficiency")
    assert runtime.is_displayed() and not header.is_displayed()


def test_screenshot_for_people(page: Any, tmp_path: Path) -> None:
    """A picture of the page to look at, kept with the test's temporary files (never in the checkout)."""
    target = tmp_path / "html-report.png"
    height = page.execute_script("return document.documentElement.scrollHeight")
    page.set_window_size(1400, min(int(height) + 40, 6000))
    assert page.save_screenshot(str(target))
    assert target.stat().st_size > 10_000


def test_a_real_runs_page_opens_without_errors(browser: Any, pytester: pytest.Pytester) -> None:
    html = _run_suite(pytester)[1]
    browser.get(html.as_uri())
    _wait(browser, lambda d: d.find_element("css selector", "html").get_attribute("data-ready") == "1")
    assert [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []
    assert browser.find_element("id", "dd-count").text == "4 of 4 instances"
