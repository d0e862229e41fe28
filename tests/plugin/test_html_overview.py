"""The report page's first screen as a person sees it, in headless Chromium at a wide and a narrow window.

Drives the same chromium/chromedriver as ``test_html_report`` (skipped, with the reason, where they are missing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_holistic.report.html_report import render
from pytest_holistic.report.leaderboard import build_leaderboard
from pytest_holistic.report.merge import merge
from tests.plugin import test_html_report as base

browser = base.browser  # the module's own Chromium, as test_html_report starts it
WIDTHS = (1400, 800)
HEIGHT = 900
COMPARISON = ("leaderboard", "win-rates", "dynascore")


def gated(model: str, accuracy: float) -> dict[str, Any]:
    """A report with a failed gate and a passed one decided early by a confidence sequence (40 of 500 instances)."""
    payload = base.report(model, accuracy, evil=True)
    key = payload["runs"][0]["key"]
    payload["gates"] = [
        {
            "status": "passed",
            "gate": "yesno:exact_match>=0.2",
            "run": key,
            "scenario": "yesno",
            "metric": "exact_match",
            "op": ">=",
            "threshold": 0.2,
            "observed": accuracy,
            "n": 40,
            "ci95": [0.3, 0.7],
            "passed": True,
            "message": "yesno exact_match = 0.5 after 40 of 500 items (stopped early)",
            "sequence": {"stopped": True, "n": 40, "of": 500, "ci": [0.3, 0.7], "decision": "holds"},
        },
        {
            "status": "failed",
            "gate": "yesno:exact_match>=0.9",
            "run": key,
            "scenario": "yesno",
            "metric": "exact_match",
            "op": ">=",
            "threshold": 0.9,
            "observed": accuracy,
            "n": 16,
            "ci95": [accuracy - 0.1, accuracy + 0.1],
            "passed": False,
            "message": "yesno exact_match = 0.5 < 0.9",
        },
    ]
    return payload


def _open(driver: Any, path: Path, width: int) -> Any:
    driver.set_window_size(width, HEIGHT)
    driver.get(path.as_uri())
    base._wait(driver, lambda d: d.find_element("css selector", "html").get_attribute("data-ready") == "1")
    assert [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"] == []
    assert driver.execute_script("return window.innerWidth") == width
    return driver


def _rect(driver: Any, selector: str) -> dict[str, float]:
    rect: dict[str, float] = driver.execute_script(
        "var r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};",
        selector,
    )
    return rect


def _not_wider_than_the_window(driver: Any) -> None:
    scroll, inner = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert scroll <= inner


@pytest.fixture
def single(tmp_path: Path) -> Path:
    payload = gated("solo", 0.5)
    path = tmp_path / "report.html"
    path.write_text(render([payload], build_leaderboard([payload])), encoding="utf-8")
    return path


@pytest.mark.parametrize("width", WIDTHS)
def test_verdicts_and_grid_are_on_the_first_screen(browser: Any, single: Path, width: int) -> None:
    page = _open(browser, single, width)
    height = page.execute_script("return window.innerHeight")
    for selector in ("#verdicts", "#grid"):
        rect = _rect(page, selector)
        assert 0 <= rect["top"] and rect["bottom"] <= height, (selector, rect, height)
    rows = [row.text for row in page.find_elements("css selector", "#verdicts-table tbody tr")]
    assert rows[0].startswith("failed") and "yesno:exact_match>=0.9" in rows[0] and "0.900" not in rows[0]
    assert ">= 0.9" in rows[0] and "[0.400, 0.600]" in rows[0] and "16" in rows[0]
    assert rows[1].startswith("passed") and "40 of 500" in rows[1]
    accuracy = page.find_element("css selector", "#grid tbody tr:first-child td:nth-child(2) a.cell")
    assert "gate-failed" in (accuracy.get_attribute("class") or "")  # two gates on it: the failed one colours it
    _not_wider_than_the_window(page)
    for section in COMPARISON:
        assert page.find_elements("id", section) == []  # one model is compared with no one


@pytest.mark.parametrize("width", WIDTHS)
def test_a_grid_cell_opens_its_scenario(browser: Any, single: Path, width: int) -> None:
    page = _open(browser, single, width)
    cell = page.find_element("css selector", "#grid tbody tr:nth-child(2) a.cell")
    cell.click()
    base._wait(page, lambda d: d.execute_script("return location.hash") == "#scenario-1")
    section = page.find_element("id", "scenario-1")
    assert section.find_element("css selector", "h3").text == "toxic<b>"  # the name as text, not markup
    top = _rect(page, "#scenario-1")["top"]
    assert 0 <= top < 50  # scrolled to it
    _not_wider_than_the_window(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_two_merged_reports_are_compared(browser: Any, tmp_path: Path, width: int) -> None:
    paths = []
    for name, accuracy in (("alpha", 0.9), ("beta", 0.6)):
        path = tmp_path / f"{name}.json"
        payload = {**gated(name, accuracy), "schema_version": 4}  # checked for the fields the page reads
        path.write_text(json.dumps(payload), encoding="utf-8")
        paths.append(path)
    _, index = merge(paths, tmp_path / "board")
    page = _open(browser, index, width)
    for section in COMPARISON:
        assert page.find_element("id", section).is_displayed()
    assert len(page.find_elements("css selector", "#verdicts-table tbody tr")) == 4
    cells = page.find_elements("css selector", "#grid tbody tr:first-child td:nth-child(2) a.cell")
    assert len(cells) == 2  # one value per model in a cell
    _not_wider_than_the_window(page)  # the wide leaderboard scrolls in its own box
