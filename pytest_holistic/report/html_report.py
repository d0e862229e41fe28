"""``report.html``: one self-contained page (an overview of the run first; for several models the leaderboard and
Dynascore; per-scenario tables and charts; instances).

Everything is inline (styles, script, SVG) and a Content-Security-Policy forbids any fetch, so the page opens
offline and leaks nothing. Model inputs and outputs are data, never markup: text in the page is escaped here,
and what the script shows travels as JSON in ``<script type="application/json">`` (with ``<``, ``>``, ``&``,
U+2028 and U+2029 escaped) and is put into the page with ``textContent`` only.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .html_assets import CSS, JS
from .html_charts import Series, before_after_chart, colour, esc, fmt, group_bars, reliability_bins, reliability_diagram
from .html_overview import overview
from .json_report import _finite, model_slug
from .overview import FAMILY_ORDER, ScenarioRuns, shared_notes
from .payload import Gate, InstanceRecord, MetricResult, Report, Run

if TYPE_CHECKING:
    from .aggregate import Results

PAGE_SIZE = 50
"""Drill-down rows drawn at once: the page stays quick with 10 000 records."""
CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
ARROWS = {"higher": "↑", "lower": "↓", "target": "◎"}
_SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def script_json(value: Any) -> str:
    """JSON that is safe inside ``<script>``: no ``</script>``, ``<!--`` or line separator can end or bend it."""
    text = json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.translate(_SCRIPT_ESCAPES)


def _data_block(element_id: str, value: Any) -> str:
    return f'<script type="application/json" id="{element_id}">{script_json(value)}</script>'


def scenario_anchor(number: int) -> str:
    """The id of the page's section for the scenario at ``number`` (in first-seen order): what the overview links to."""
    return f"scenario-{number}"


def _family_key(family: str) -> tuple[int, str]:
    return (FAMILY_ORDER.index(family) if family in FAMILY_ORDER else len(FAMILY_ORDER), family)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _value_cell(value: float | None, low: float | None, high: float | None, n: Any, sort: float | None, attrs: str = "") -> str:
    interval = f'<span class="ci">[{fmt(low)}, {fmt(high)}]</span>' if low is not None or high is not None else ""
    count = f' title="n = {esc(n)}"' if n is not None else ""
    key = "" if sort is None else repr(sort)
    return f'<td class="num"{attrs} data-sort="{key}"{count}>{fmt(value)}{interval}</td>'


def _sort_key(value: float | None, direction: str, optimum: float | None) -> float | None:
    """What a column sorts on: the value, or for a target metric its distance from the optimum (smaller is better)."""
    if value is None or direction != "target" or optimum is None:
        return value
    return abs(value - optimum)


def _sort_direction(direction: str) -> str:
    """Which way a column sorts best-first: a target metric by its distance (lower), anything unknown as text."""
    return "lower" if direction == "target" else direction if direction in ("higher", "lower") else "text"


@dataclass(frozen=True, slots=True)
class RunColumn:
    """One model's run of a scenario: a column of the scenario's table and a series of its charts."""

    label: str
    index: int
    run: Run

    @property
    def series(self) -> Series:
        return Series(self.label, colour(self.index))


def _scenario_columns(
    reports: Sequence[Report], names: Sequence[str], labels: Sequence[Sequence[str]]
) -> dict[str, list[RunColumn]]:
    """Run label (the leaderboard's ``run_columns``) -> its runs across the reports, a column per model, in first-seen
    order: two runs of one scenario in one report get two sections, as they get two leaderboard columns."""
    scenarios: dict[str, list[RunColumn]] = {}
    for index, (name, report, labelled) in enumerate(zip(names, reports, labels, strict=True)):
        for run, label in zip(report.get("runs") or (), labelled, strict=True):
            scenarios.setdefault(label, []).append(RunColumn(name, index, run))
    return scenarios


def is_correct(record: InstanceRecord) -> bool | None:
    """Whether the answer is right, as the calibration metrics read it: the chosen option, else an exact match."""
    completion = record.get("completion")
    if not completion:
        return None
    if completion.get("correct") is not None:
        return bool(completion["correct"])
    gold, text = completion.get("gold") or (), str(completion.get("text") or "")
    if not gold:
        return None
    from ..metrics.accuracy import exact_match  # light, but only needed when a report is written

    return bool(exact_match(text, [str(g) for g in gold]))


# --- sections -------------------------------------------------------------------------------------------------------


GATE_STATUSES = ("passed", "failed", "not_evaluated")


def _gate_status(gate: Gate) -> str:
    """One of GATE_STATUSES (a class name too, so nothing else gets through)."""
    status = gate.get("status") or ("passed" if gate.get("passed") else "failed")
    return status if status in GATE_STATUSES else "failed"


def _early_stop(columns: Sequence[RunColumn]) -> str:
    """Under a scenario's heading: where each of its runs stopped early, or why one that could ran in full."""
    lines = []
    for column in columns:
        stop = column.run.get("early_stop")
        if not isinstance(stop, Mapping):
            continue
        where = (
            f"stopped early after {stop.get('n')} of {stop.get('of')} instances"
            if stop.get("stopped")
            else f"ran all {stop.get('of')} instances"
        )
        level = _number(stop.get("level"))
        shown = f" at {level:.0%}" if level is not None else ""
        lines.append(f"<li>{esc(where)} ({esc(stop.get('method'))}{esc(shown)}): {esc(stop.get('reason'))}</li>")
    return f'<ul class="early-stop">{"".join(lines)}</ul>' if lines else ""


def _memory(model: Mapping[str, Any]) -> str:
    """The model's peak memory as the leaderboard counts it, and what measured it (or why nothing did)."""
    gb, source = _number(model.get("memory_gb")), model.get("memory_source")
    if gb is None:
        return f", peak memory {esc(source)}" if source else ""
    return f", peak memory {gb:.1f} GB ({esc(source)})"


def _summary(reports: Sequence[Report], names: Sequence[str], models: Sequence[Mapping[str, Any]]) -> str:
    """One line per model (run, time, completeness, memory, gate counts); the gates themselves are in the overview."""
    memory = {str(model.get("name")): _memory(model) for model in models if isinstance(model, Mapping)}
    items = []
    for name, report in zip(names, reports, strict=True):
        gates = report.get("gates") or []
        statuses = [_gate_status(gate) for gate in gates]
        state = "complete" if report.get("complete", True) else "incomplete"
        if report.get("interrupted"):
            state = f"interrupted ({report['interrupted']})"
        counts = ", ".join(
            f"<span class='status-{status}'>{statuses.count(status)} {status.replace('_', ' ')}</span>"
            for status in GATE_STATUSES
            if statuses.count(status)
        )
        items.append(
            f"<li><strong>{esc(name)}</strong> — run {esc(report.get('run_id'))}, {esc(report.get('created'))}, "
            f"{len(report.get('runs') or [])} runs, {esc(state)}{memory.get(name, '')}{f'; gates: {counts}' if gates else ''}</li>"
        )
    return f'<ul class="summary">{"".join(items)}</ul>'


def _leaderboard(board: Mapping[str, Any]) -> str:
    columns = list(board.get("columns") or [])
    models = [str(model["name"]) for model in board.get("models") or []]
    if not columns or not models:
        return '<section id="leaderboard"><h2>Leaderboard</h2><p class="muted">No metrics to compare.</p></section>'
    families = sorted({str(column["family"]) for column in columns}, key=_family_key)
    chosen = "main" if any(column.get("main") for column in columns) else families[0]
    options = ([("main", "main metrics")] if chosen == "main" else []) + [(family, family) for family in families]
    select = "".join(f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(t)}</option>' for v, t in options)

    def attrs(column: Mapping[str, Any]) -> str:
        hidden = not column.get("main") if chosen == "main" else column["family"] != chosen
        return f' data-family="{esc(column["family"])}" data-main="{1 if column.get("main") else 0}"{" hidden" if hidden else ""}'

    head = ['<th data-sortable data-direction="text">Model</th>']
    for column in columns:
        direction = str(column.get("direction") or "")
        target = f" (target {fmt(column.get('optimum'))})" if direction == "target" else ""
        head.append(
            f'<th data-sortable data-direction="{_sort_direction(direction)}"{attrs(column)} title="{esc(column["key"])}{target}">'
            f"{esc(column['scenario'])}<br>{esc(column['metric'])} {ARROWS.get(direction, '')}</th>"
        )
    rows = []
    cells = board.get("cells") or {}
    for model in models:
        row = [f'<th data-sort="{esc(model)}">{esc(model)}</th>']
        for column in columns:
            cell = (cells.get(model) or {}).get(column["key"]) or {}
            value = _number(cell.get("value"))
            sort = _sort_key(value, str(column.get("direction")), _number(column.get("optimum")))
            row.append(
                _value_cell(value, _number(cell.get("low")), _number(cell.get("high")), cell.get("n"), sort, attrs(column))
            )
        rows.append(f"<tr>{''.join(row)}</tr>")
    return (
        '<section id="leaderboard"><h2>Leaderboard</h2>'
        '<p class="muted">Each cell: the metric with its 95% interval (Wilson for up to 500 scores of 0 or 1, else bootstrap). ↑ higher is better, ↓ lower is better, '
        "◎ closest to a target is best. Click a column to sort.</p>"
        f'<div class="controls"><label>Columns <select id="lb-family">{select}</select></label></div>'
        f'<div class="scroll"><table id="leaderboard-table" class="sortable"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _win_rates(board: Mapping[str, Any]) -> str:
    rates = board.get("win_rates") or {}
    models = [str(model["name"]) for model in board.get("models") or []]
    if not rates or not models:
        return ""
    keys = sorted(rates, key=lambda key: (key != "helm", key != "main", _family_key(key)))
    head = "".join(f'<th data-sortable data-direction="higher">{esc(key)}</th>' for key in keys)
    rows = "".join(
        f'<tr><th data-sort="{esc(model)}">{esc(model)}</th>'
        + "".join(
            _value_cell(_number((rates[key] or {}).get(model)), None, None, None, _number((rates[key] or {}).get(model)))
            for key in keys
        )
        + "</tr>"
        for model in models
    )
    return (
        '<section id="win-rates"><h2>Mean win rates</h2><p class="muted">HELM\'s mean win rate: per family, the share of '
        "other models each model beats, averaged over the scenarios (main: the main metric of each run; helm: the main "
        "metric of each HELM run group, HELM's own leaderboard number, from the table below).</p>"
        f'<div class="scroll"><table id="win-rate-table" class="sortable"><thead><tr><th data-sortable data-direction="text">Model</th>'
        f"{head}</tr></thead><tbody>{rows}</tbody></table></div></section>"
    )


def _helm_groups(board: Mapping[str, Any]) -> str:
    """Each model's value per HELM run group (HELM Lite's columns: LegalBench, the mean of its tasks; MMLU, of its subjects)."""
    helm = board.get("helm_groups") or {}
    columns = [column for column in helm.get("columns") or [] if isinstance(column, Mapping)]
    models = [str(model["name"]) for model in board.get("models") or []]
    if not columns or not models:
        return ""
    head = "".join(
        f'<th data-sortable data-direction="{_sort_direction(str(column.get("direction")))}" title="{esc(", ".join(column.get("runs") or []))}">'
        f'{esc(column["key"])}<br><span class="muted">{esc(column.get("metric"))}</span></th>'
        for column in columns
    )
    cells = helm.get("cells") or {}
    rows = "".join(
        f'<tr><th data-sort="{esc(model)}">{esc(model)}</th>'
        + "".join(
            _value_cell(value := _number((cells.get(model) or {}).get(column["key"])), None, None, None, value)
            for column in columns
        )
        + "</tr>"
        for model in models
    )
    return (
        '<section id="helm-groups"><h2>HELM run groups</h2><p class="muted">HELM\'s leaderboard columns: each group\'s '
        "main metric, the mean over its runs (a per-subject run counts each subject once), as HELM's tables average "
        "them; hover a column for its runs.</p>"
        f'<div class="scroll"><table id="helm-group-table" class="sortable"><thead><tr><th data-sortable data-direction="text">'
        f"Model</th>{head}</tr></thead><tbody>{rows}</tbody></table></div></section>"
    )


def _dynascore(board: Mapping[str, Any]) -> str:
    dyna = board.get("dynascore") or {}
    metrics = [str(metric) for metric in dyna.get("metrics") or []]
    scenarios = dyna.get("scenarios") or {}
    if not metrics or not scenarios:
        return ""
    defaults = dyna.get("default_weights") or {}
    weights = {metric: _number(defaults.get(metric)) or 0.0 for metric in metrics}
    sliders = "".join(
        f'<label for="w-{esc(metric)}"><span>{esc(metric)}</span><input type="range" class="weight" id="w-{esc(metric)}" '
        f'data-metric="{esc(metric)}" min="0" max="1" step="0.005" value="{weight!r}" data-default="{weight!r}">'
        f'<output id="w-{esc(metric)}-share"></output></label>'
        for metric, weight in weights.items()
    )
    shared, alone = shared_notes(
        {str(scenario): [str(n) for n in entry.get("notes") or ()] for scenario, entry in scenarios.items()}
    )
    tables = []
    for scenario, entry in scenarios.items():
        sources = entry.get("sources") or {}
        amrs = entry.get("amrs") or {}
        head = "".join(
            f'<th data-sortable data-direction="higher" title="{esc(sources.get(m) or "no source metric")}; AMRS {fmt(_number(amrs.get(m)))}">'
            f"{esc(m)}<span class='ci'>{esc(sources.get(m) or 'n/a')}</span></th>"
            for m in metrics
        )
        ranking = [str(model) for model in entry.get("ranking") or []]
        models = ranking + [str(model) for model in entry.get("scores") or {} if str(model) not in ranking]
        rows = []
        for rank, model in enumerate(models, start=1):
            goods = (entry.get("goods") or {}).get(model) or {}
            score = _number((entry.get("scores") or {}).get(model))
            cells = "".join(_value_cell(_number(goods.get(m)), None, None, None, _number(goods.get(m))) for m in metrics)
            rows.append(
                f'<tr data-model="{esc(model)}"><td class="rank">{rank}</td><th data-sort="{esc(model)}">{esc(model)}</th>'
                f'<td class="num score" data-sort="{"" if score is None else repr(score)}">{fmt(score)}</td>{cells}</tr>'
            )
        foot = "".join(f'<td class="num">{fmt(_number(amrs.get(m)))}</td>' for m in metrics)
        notes = "".join(f"<li>{esc(note)}</li>" for note in alone.get(str(scenario), ()))
        tables.append(
            f'<div class="scroll"><table class="dyna sortable" data-scenario="{esc(scenario)}"><caption>{esc(scenario)}</caption><thead><tr>'
            '<th title="Dynascore rank">#</th><th data-sortable data-direction="text">Model</th>'
            f'<th data-sortable data-direction="higher">Dynascore</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            f'<tfoot><tr><td></td><th colspan="2">AMRS</th>{foot}</tr></tfoot></table>'
            f"{f'<ul class=muted>{notes}</ul>' if notes else ''}</div>"
        )
    cap = _number(dyna.get("memory_cap_gb"))
    return (
        '<section id="dynascore"><h2>Dynascore</h2><p class="muted">Dynaboard\'s utility-weighted score (Ma et al. 2021): '
        "each metric's good is divided by its average marginal rate of substitution (AMRS) against performance and "
        "weighted by the slider weights, normalised over the metrics that have an AMRS in that scenario (a metric without "
        "one cannot be put in performance units and is left out). Move a slider to re-rank the models."
        f"{f' Memory is counted against a {cap:g} GB cap.' if cap is not None else ''}</p>"
        f'<div class="controls weights">{sliders}<button type="button" id="dyna-reset">Dynaboard defaults</button></div>'
        f"{_said_once(shared, len(scenarios))}"
        f'<div class="dyna-tables">{"".join(tables)}</div>{_data_block("holistic-dynascore", dyna)}</section>'
    )


def _said_once(shared: Sequence[tuple[str, Sequence[str]]], total: int) -> str:
    """Notes that hold for several scenarios' Dynascores, each once, with where it holds (rather than under every table)."""
    lines = "".join(
        f"<li>{esc(note)} <span class='muted'>({'every scenario' if len(where) == total else esc(', '.join(where))})</span></li>"
        for note, where in shared
    )
    return f'<ul class="notes" id="dyna-notes">{lines}</ul>' if lines else ""


def _metric_table(columns: Sequence[RunColumn]) -> str:
    """Rows: the metrics, grouped under their family; columns: the models' runs; each cell a value and its interval."""
    metrics: dict[str, dict[str, MetricResult]] = {}
    for column in columns:
        for name, result in (column.run.get("metrics") or {}).items():
            metrics.setdefault(str(result.get("family") or "custom"), {}).setdefault(name, result)
    head = "".join(f"<th>{esc(column.label)}</th>" for column in columns)
    body = []
    for family in sorted(metrics, key=_family_key):
        body.append(f'<tr class="family"><th colspan="{len(columns) + 1}">{esc(family)}</th></tr>')
        for name, first in metrics[family].items():
            direction = str(first.get("direction") or "")
            target = f" (target {fmt(_number(first.get('optimum')))})" if direction == "target" else ""
            cells = []
            for column in columns:
                result = (column.run.get("metrics") or {}).get(name) or {}
                ci = result.get("ci95") or [None, None]
                value = _number(result.get("value"))
                cells.append(_value_cell(value, _number(ci[0]), _number(ci[1]), result.get("n"), value))
            body.append(f"<tr><th>{esc(name)} {ARROWS.get(direction, '')}{esc(target)}</th>{''.join(cells)}</tr>")
    return f'<div class="scroll"><table class="metrics"><thead><tr><th>metric</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _reads_correctness(run: Run) -> bool:
    """Whether a run's numbers judge answers right or wrong (calibration does; a free continuation is not graded)."""
    return any(result.get("family") == "calibration" for result in (run.get("metrics") or {}).values())


def _reliability(scenario: str, columns: Sequence[RunColumn]) -> str:
    series = []
    for column in columns:
        metrics = column.run.get("metrics") or {}
        if not _reads_correctness(column.run):
            continue
        pairs = []
        for record in column.run.get("instances") or ():
            if record.get("perturbation") is not None or record.get("outcome") == "skipped":
                continue
            probability = _number((record.get("completion") or {}).get("probability"))
            correct = is_correct(record)
            if probability is not None and correct is not None and 0.0 <= probability <= 1.0:
                pairs.append((probability, correct))
        if pairs:
            series.append((column.series, reliability_bins(pairs), _number((metrics.get("ece_10_bin") or {}).get("value"))))
    if not series:
        return ""
    chart = reliability_diagram(series, f"Reliability diagram: {scenario}")
    return (
        f'<figure class="reliability-figure">{chart}<figcaption>Calibration: accuracy against the probability the model gave '
        "its answer, in ten equal-width bins (dot area: answers in the bin); on the dashed diagonal a model is perfectly "
        "calibrated. ECE in the legend uses HELM's ten equal-mass bins.</figcaption></figure>"
    )


def _perturbation_charts(columns: Sequence[RunColumn]) -> str:
    figures = []
    for column in columns:
        for preset, entry in (column.run.get("perturbations") or {}).items():
            rows = [(str(metric), stats) for metric, stats in (entry.get("metrics") or {}).items()]
            if not rows:
                continue
            family = str(entry.get("family") or "perturbation")
            title = f"{family}: {preset} ({column.label})"
            counts = ", ".join(f"{key} {entry[key]}" for key in ("changed", "flipped", "unchanged", "left_out") if key in entry)
            figures.append(
                f'<figure class="perturbation-figure">{before_after_chart(rows, title, colour(column.index))}'
                f"<figcaption>{esc(title)} — instances {esc(counts)}. {esc(entry.get('source') or '')}</figcaption></figure>"
            )
    return "".join(figures)


def _group_charts(columns: Sequence[RunColumn]) -> str:
    figures = []
    for column in columns:
        for entry in column.run.get("groups") or ():
            groups = entry.get("groups") or {}
            if not groups:
                continue
            title = f"{entry.get('metric')} by group ({column.label})"
            gap = _number(entry.get("gap"))
            figures.append(
                f'<figure class="group-figure">{group_bars(groups, entry.get("worst"), entry.get("best"), title, colour(column.index))}'
                f"<figcaption>{esc(title)}: worst {esc(entry.get('worst'))}, best {esc(entry.get('best'))}, "
                f"gap {fmt(gap)}.</figcaption></figure>"
            )
    return "".join(figures)


def _scenarios(scenarios: Mapping[str, Sequence[RunColumn]]) -> str:
    parts = []
    for number, (scenario, columns) in enumerate(scenarios.items()):
        reliability = _reliability(scenario, columns)
        perturbed = _perturbation_charts(columns)
        groups = _group_charts(columns)
        parts.append(
            f'<section class="scenario" id="{scenario_anchor(number)}"><h3>{esc(scenario)}</h3>{_early_stop(columns)}'
            f"{_metric_table(columns)}"
            + (f'<h4>Calibration</h4><div class="charts">{reliability}</div>' if reliability else "")
            + (
                f'<h4>Robustness and fairness: before and after perturbation</h4><div class="charts">{perturbed}</div>'
                if perturbed
                else ""
            )
            + (f'<h4>Per group</h4><div class="charts">{groups}</div>' if groups else "")
            + "</section>"
        )
    return f'<section id="scenarios"><h2>Scenarios</h2>{"".join(parts)}</section>'


def _instance_data(scenarios: Mapping[str, Sequence[RunColumn]], names: Sequence[str]) -> dict[str, Any]:
    """Every record, compactly: one row of fields each, and each run's shared prompt prefix (few-shot examples) once."""
    runs: list[dict[str, Any]] = []
    records = []
    for scenario, columns in scenarios.items():
        for column in columns:
            instances = column.run.get("instances") or []
            prompts = [str(record["prompt"]) for record in instances if record.get("prompt") is not None]
            prefix = os.path.commonprefix(prompts) if len(prompts) > 1 else ""
            graded = _reads_correctness(column.run)
            number = len(runs)
            runs.append({"model": names[column.index], "scenario": scenario, "key": column.run.get("key"), "prefix": prefix})
            for record in instances:
                completion = record.get("completion") or {}
                prompt = record.get("prompt")
                correct = is_correct(record) if graded or completion.get("correct") is not None else None
                records.append(
                    [
                        number,
                        str(record.get("instance_id")),
                        record.get("perturbation"),
                        str(record.get("outcome")),
                        None if prompt is None else str(prompt)[len(prefix) :],
                        completion.get("text") if record.get("completion") else None,
                        [
                            [str(ref.get("text")), bool(ref.get("correct"))]
                            for ref in (record.get("instance") or {}).get("references") or ()
                        ],
                        dict(record.get("scores") or {}),
                        record.get("error"),
                        None if correct is None else int(correct),
                        _number(completion.get("probability")),
                    ]
                )
    return {"page_size": PAGE_SIZE, "runs": runs, "records": records}


def _options(values: Iterable[tuple[str, str]]) -> str:
    return "".join(f'<option value="{esc(value)}">{esc(text)}</option>' for value, text in values)


def _drill_down(data: Mapping[str, Any]) -> str:
    records = data["records"]
    outcomes = sorted({record[3] for record in records})
    variants = sorted({record[2] for record in records if record[2] is not None})
    models = list(dict.fromkeys(run["model"] for run in data["runs"]))
    scenarios = list(dict.fromkeys(run["scenario"] for run in data["runs"]))
    return (
        '<section id="instances"><h2>Instances</h2><div class="controls">'
        '<label>Search <input type="search" id="dd-text" placeholder="id, prompt, answer, reference…" size="32"></label>'
        f'<label>Outcome <select id="dd-outcome">{_options([("", "all"), *((o, o) for o in outcomes)])}</select></label>'
        f'<label>Model <select id="dd-model">{_options([("", "all"), *((m, m) for m in models)])}</select></label>'
        f'<label>Scenario <select id="dd-scenario">{_options([("", "all"), *((s, s) for s in scenarios)])}</select></label>'
        '<label>Perturbation <select id="dd-perturbation">'
        f"{_options([('', 'all'), ('original', 'originals only'), *((f'variant:{v}', v) for v in variants)])}</select></label>"
        '<span class="pager"><button type="button" id="dd-prev">‹ prev</button> <span id="dd-page"></span> '
        '<button type="button" id="dd-next">next ›</button></span> <span id="dd-count" class="muted"></span></div>'
        '<table id="dd-table"><colgroup><col style="width:11%"><col style="width:8%"><col style="width:6%"><col style="width:30%">'
        '<col style="width:20%"><col style="width:14%"><col style="width:11%"></colgroup><thead><tr><th>Instance</th>'
        "<th>Perturbation</th><th>Outcome</th><th>Prompt</th><th>Completion</th><th>References</th><th>Scores</th></tr></thead>"
        f'<tbody id="dd-rows"></tbody></table>{_data_block("holistic-instances", data)}</section>'
    )


def render(reports: Sequence[Report], leaderboard: Mapping[str, Any], *, comparison: bool | None = None) -> str:
    """The whole page for one or more reports (one per model) and their leaderboard.

    ``comparison``: whether to show the sections that compare models (leaderboard, win rates, Dynascore); by
    default only with two models or more, since with one they rank it against no one.
    """
    from .leaderboard import model_names, run_columns  # lazily, as in HtmlWriter.write: leaderboard.py may use this module

    names = model_names(reports)  # the leaderboard's names for the same reports, so the two always agree
    scenarios = _scenario_columns(reports, names, run_columns(reports))
    title = "pytest-holistic report: " + ", ".join(names)
    compare = len(reports) > 1 if comparison is None else comparison
    comparing = (
        [_leaderboard(leaderboard), _win_rates(leaderboard), _helm_groups(leaderboard), _dynascore(leaderboard)]
        if compare
        else []
    )
    views = [ScenarioRuns(name, scenario_anchor(number), columns) for number, (name, columns) in enumerate(scenarios.items())]
    sections = [
        overview(reports, names, views),
        *comparing,
        _scenarios(scenarios),
        _drill_down(_instance_data(scenarios, names)),
    ]
    nav = [("leaderboard", "Leaderboard"), ("win-rates", "Win rates"), ("dynascore", "Dynascore")]
    links = "".join(f'<a href="#{key}">{text}</a>' for key, text in nav if f'id="{key}"' in "".join(comparing))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f'<header class="top"><h1>{esc(title)}</h1>{_summary(reports, names, leaderboard.get("models") or [])}'
        f'<nav><a href="#overview">Overview</a>{links}<a href="#scenarios">Scenarios</a><a href="#instances">Instances</a></nav>'
        "<noscript><p>Sorting, the Dynascore sliders and the instance list need JavaScript.</p></noscript></header>"
        f"<main>{''.join(sections)}</main><script>{JS}</script></body></html>\n"
    )


class HtmlWriter:
    """``<report dir>/<model>/<run id>/report.html``, beside ``report.json``; a temporary folder if that cannot be written."""

    name = "html"

    def __init__(self, report_dir: Path, model_spec: str, run_id: str) -> None:
        self.target = report_dir / model_slug(model_spec) / run_id / "report.html"
        self.problem: str | None = None

    def write(self, results: Results, payload: Report) -> Path:
        from .files import write_atomic  # readable as the umask allows, like the merged leaderboard's index.html
        from .leaderboard import build_leaderboard

        text = render([payload], build_leaderboard([payload]))
        try:
            return write_atomic(self.target, text)
        except OSError as error:
            fallback = Path(tempfile.mkdtemp(prefix="pytest-holistic-")) / "report.html"
            self.problem = f"could not write {self.target} ({error.strerror or error}); wrote {fallback} instead"
            return write_atomic(fallback, text)
