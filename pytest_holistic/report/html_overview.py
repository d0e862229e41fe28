"""The report page's first screen: the gates' verdicts, a scenario × family grid, where the model breaks, and the
main metric per scenario as a chart.

It answers "how did this model do, and where does it break" before any section meant for comparing models.
Every name and number goes through ``esc``/``fmt``; a grid cell or chart row is a plain link to its scenario's
section, so the screen needs no script.
"""

from __future__ import annotations

from collections.abc import Sequence

from .html_charts import IntervalRow, colour, esc, fmt, interval_chart
from .overview import ScenarioRuns, Value, Verdict, calibration, drops, grid, main_metric, main_values, verdicts, worst_groups
from .payload import Report

ARROWS = {"higher": "↑", "lower": "↓", "target": "◎"}
LABEL_ROOM = 42
"""Characters of a chart row's label (as many as the chart's label column holds)."""
SHADES = 5
"""Steps of the neutral scale a cell without a gate is shaded on (its value on the metric's own 0-1 "good" scale)."""


def _interval(value: Value) -> str:
    if value.low is None and value.high is None:
        return ""
    return f'<span class="ci">[{fmt(value.low)}, {fmt(value.high)}]</span>'


def _who(label: str, several: bool) -> str:
    """A model's label where the page shows several, else nothing."""
    return f' <span class="muted">· {esc(label)}</span>' if several else ""


def _verdicts(rows: Sequence[Verdict], several: bool) -> str:
    if not rows:
        return '<div id="verdicts"><h3>Gates</h3><p class="muted">No gate was set on this run: nothing was asked to pass or fail.</p></div>'
    counts = {status: sum(row.status == status for row in rows) for status in ("failed", "not_evaluated", "passed")}
    said = ", ".join(f'<span class="status-{s}">{n} {s.replace("_", " ")}</span>' for s, n in counts.items() if n)
    body = []
    for row in rows:
        scenario = f'<a href="#{esc(row.anchor)}">{esc(row.scenario)}</a>' if row.anchor else esc(row.scenario)
        body.append(
            f'<tr class="verdict-{row.status}" title="{esc(row.message)}"><td><span class="badge {row.status}">'
            f"{esc(row.status.replace('_', ' '))}</span></td><td><code>{esc(row.gate)}</code>{_who(row.label, several)}</td>"
            f'<td>{scenario}</td><td class="num">{fmt(row.observed)}</td>'
            f'<td class="num">{"" if row.low is None and row.high is None else f"[{fmt(row.low)}, {fmt(row.high)}]"}</td>'
            f'<td class="num">{esc(row.n)}</td><td class="num">{esc(row.threshold)}</td></tr>'
        )
    return (
        f'<div id="verdicts"><h3>Gates: {said}</h3><div class="scroll verdict-box"><table id="verdicts-table">'
        "<thead><tr><th>verdict</th><th>gate</th><th>scenario</th><th>value</th><th>95% interval</th><th>n</th>"
        f"<th>threshold</th></tr></thead><tbody>{''.join(body)}</tbody></table></div></div>"
    )


def _name(scenario: str) -> str:
    """A scenario's name with its edition (``boolq [offline edition: ...]``) set smaller, so the grid's rows stay short."""
    base, bracket, edition = scenario.partition(" [")
    if not bracket or not edition.endswith("]"):
        return esc(scenario)
    return f'{esc(base)} <span class="edition">[{esc(edition)}</span>'


def _shade(value: Value) -> str:
    share = value.share
    return "" if share is None else f" shade-{min(SHADES - 1, int(share * SHADES))}"


def _grid(scenarios: Sequence[ScenarioRuns], reports: Sequence[Report], several: bool) -> str:
    families, rows = grid(scenarios, reports)
    if not families:
        return '<p class="muted" id="grid-none">No scenario recorded a metric.</p>'
    head = "".join(f"<th>{esc(family)}</th>" for family in families)
    body = []
    for scenario, row in zip(scenarios, rows, strict=True):
        href = f"#{esc(scenario.anchor)}"
        cells = []
        for family_cells in row:
            links = []
            for cell in family_cells:
                value = cell.value
                shade = f" gate-{cell.gate}" if cell.gate else _shade(value)
                tip = f"{cell.label} · {value.metric} {ARROWS.get(value.direction, '')} · n = {value.n}"
                tip += f" · gate {cell.gate.replace('_', ' ')}" if cell.gate else ""
                swatch = f'<i class="swatch" style="background:{colour(cell.index)}"></i>' if several else ""
                links.append(
                    f'<a class="cell{shade}" href="{href}" title="{esc(tip)}">{swatch}{fmt(value.value)}{_interval(value)}</a>'
                )
            alone = family_cells[0] if len(family_cells) == 1 else None  # one value: the whole cell takes its colour
            fill = "" if alone is None else (f" gate-{alone.gate}" if alone.gate else _shade(alone.value))
            cells.append(f'<td class="{fill.strip()}">{"".join(links)}</td>' if fill else f"<td>{''.join(links)}</td>")
        main = next((name for labelled in scenario.runs[:1] if (name := main_metric(labelled.run))), "")
        body.append(
            f'<tr><th><a href="{href}">{_name(scenario.name)}</a>'
            f"{f'<span class=metric>{esc(main)}</span>' if main else ''}</th>{''.join(cells)}</tr>"
        )
    return (
        '<div id="grid-block"><h3>Scenarios × families</h3><p class="muted legend">Each cell: the family\'s main metric '
        "with its 95% interval (hover for its name and n); click to open the scenario. "
        '<span class="key gate-failed">gate failed</span> <span class="key gate-passed">gate passed</span> '
        '<span class="key gate-not_evaluated">gate not evaluated</span>; without a gate, the darker '
        '<span class="key shade-4">the better</span> on the metric\'s own 0–1 scale (no shade: no fixed scale).</p>'
        f'<div class="scroll"><table id="grid" class="grid"><thead><tr><th>scenario</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div></div>"
    )


def _scenario_link(anchor: str, scenario: str, label: str, several: bool) -> str:
    return f'<a href="#{esc(anchor)}">{esc(scenario)}</a>{_who(label, several)}'


def _glance(element_id: str, title: str, header: str, body: str, scroll: str = "scroll") -> str:
    """One "where it breaks" table: its heading, then the table in a box that scrolls inside the page's width."""
    return (
        f'<div class="glance" id="{element_id}"><h3>{title}</h3><div class="{scroll}">'
        f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table></div></div>"
    )


def _drops(scenarios: Sequence[ScenarioRuns], several: bool) -> str:
    rows = drops(scenarios)
    if not rows:
        return '<div class="glance" id="drops"><h3>Robustness and fairness</h3><p class="muted">No perturbation lowered a main metric.</p></div>'
    body = "".join(
        f"<tr><td>{esc(row.perturbation)} <span class='muted'>{esc(row.family)}</span></td>"
        f"<td>{_scenario_link(row.anchor, row.scenario, row.label, several)} <span class='muted'>{esc(row.metric)}</span></td>"
        f'<td class="num">{fmt(row.before.value)} → {fmt(row.after.value)} <span class="loss">−{fmt(row.loss)}</span></td>'
        f'<td class="num">{"—" if row.flipped is None else row.flipped}{"" if row.changed is None else f" of {row.changed}"}</td></tr>'
        for row in rows
    )
    header = (
        "<th>perturbation</th><th>scenario · metric</th><th>before → after</th>"
        '<th title="instances whose answer went from right to wrong or back">flipped</th>'
    )
    return _glance("drops", "Largest robustness and fairness drops", header, body)


def _groups(scenarios: Sequence[ScenarioRuns], several: bool) -> str:
    rows = worst_groups(scenarios)
    if not rows:
        return ""
    body = "".join(
        f"<tr><td>{_scenario_link(row.anchor, row.scenario, row.label, several)} <span class='muted'>{esc(row.metric)}</span></td>"
        f'<td>{esc(row.worst)} <span class="num">{fmt(row.worst_mean)}</span> <span class="muted">n={esc(row.worst_n)}</span></td>'
        f'<td>{esc(row.best)} <span class="num">{fmt(row.best_mean)}</span></td><td class="num">{fmt(row.gap)}</td></tr>'
        for row in rows
    )
    header = "<th>scenario · metric</th><th>worst group</th><th>best group</th><th>gap</th>"
    return _glance("worst-groups", "Worst groups", header, body)


def _calibration(scenarios: Sequence[ScenarioRuns], several: bool) -> str:
    rows = calibration(scenarios)
    if not rows:
        return ""
    body = "".join(
        f"<tr><td>{_scenario_link(row.anchor, row.scenario, row.label, several)}</td>"
        f'<td class="num">{fmt(row.ece.value)}</td><td class="num ci-inline">{_interval(row.ece)}</td></tr>'
        for row in rows
    )
    header = "<th>scenario</th><th>ECE</th><th>95% interval</th>"
    return _glance("calibration-glance", "Calibration (ECE, 10 bins ↓)", header, body, "scroll tall")


def _chart_label(scenario: str, model: str | None, value: Value) -> tuple[str, str]:
    """A row's label short enough to read whole (the scenario cut, its metric kept), and the full one for its tooltip."""
    metric = f"{value.metric} {ARROWS.get(value.direction, '')}".strip()
    who = f"{scenario} · {model}" if model else scenario
    room = LABEL_ROOM - len(metric) - 3
    shown = who if len(who) <= room else who[: max(room - 1, 8)].rstrip() + "…"
    return f"{shown} · {metric}", f"{who} · {metric}"


def _main_chart(scenarios: Sequence[ScenarioRuns], several: bool) -> str:
    rows = []
    for scenario, labelled, value in main_values(scenarios):
        if value.value is None:
            continue
        shown, full = _chart_label(scenario.name, labelled.label if several else None, value)
        href = f"#{scenario.anchor}"
        rows.append(IntervalRow(shown, value.value, value.low, value.high, colour(labelled.index), href, full))
    if not rows:
        return ""
    return (
        f'<figure id="main-chart">{interval_chart(rows, "Main metric per scenario, with 95% intervals")}'
        "<figcaption>Each scenario's main metric (the first it asks for) with its 95% interval, largest first "
        "(↑ higher is better, ↓ lower is better); click a row to open the scenario.</figcaption></figure>"
    )


def overview(reports: Sequence[Report], names: Sequence[str], scenarios: Sequence[ScenarioRuns]) -> str:
    """The overview section: verdicts, grid, where it breaks, and the main-metric chart."""
    several = len(reports) > 1
    breaks = _drops(scenarios, several) + _groups(scenarios, several) + _calibration(scenarios, several)
    return (
        f'<section id="overview"><div class="first-screen">{_verdicts(verdicts(reports, names, scenarios), several)}'
        f"{_grid(scenarios, reports, several)}</div>"
        f'<h2>Where it breaks</h2><div class="glances">{breaks}</div>{_main_chart(scenarios, several)}</section>'
    )
