"""Static SVG charts for the HTML report: reliability diagram, before/after bars, per-group bars.

Drawn here, in Python, rather than in the browser: the numbers are fixed once the report is written, so the
page needs no charting code, and every label goes through one escaping function.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .payload import GroupStats, MetricResult

PALETTE = ("#3366cc", "#dc7633", "#229954", "#8e44ad", "#c0392b", "#17a589", "#b7950b", "#5d6d7e")
"""Series colours, one per model column (cycled past eight)."""
BEFORE_COLOUR = "#a6acaf"
RELIABILITY_BINS = 10


def esc(value: Any) -> str:
    """Text for HTML or SVG content and attribute values: ``<``, ``>``, ``&`` and both quotes escaped."""
    return html.escape(str(value), quote=True)


def fmt(value: float | None) -> str:
    """A number short enough for a table cell or a bar label; ``—`` for a missing one."""
    if value is None or not math.isfinite(value):
        return "—"
    if value != 0 and abs(value) < 0.001:
        return f"{value:.2e}"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@dataclass(frozen=True, slots=True)
class Axis:
    """Maps a value in [low, high] to a pixel position starting at ``start`` (``flip``: upwards, for a y axis)."""

    low: float
    high: float
    start: float
    length: float
    flip: bool = False

    def __call__(self, value: float) -> float:
        share = (value - self.low) / (self.high - self.low)
        return self.start + (1 - share if self.flip else share) * self.length


def _svg(width: int, height: int, label: str, body: Sequence[str], css_class: str) -> str:
    return (
        f'<svg class="{css_class}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{esc(label)}"><title>{esc(label)}</title>{"".join(body)}</svg>'
    )


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """One equal-width confidence bin: how many answers fell in it, their mean confidence and accuracy."""

    low: float
    high: float
    n: int
    confidence: float
    accuracy: float


@dataclass(frozen=True, slots=True)
class Series:
    """One line of a chart: a label (the model, with the split where a model has two runs) and its colour."""

    label: str
    colour: str


def reliability_bins(pairs: Sequence[tuple[float, bool]], bins: int = RELIABILITY_BINS) -> list[ReliabilityBin]:
    """Equal-width bins over [0, 1] (the conventional diagram; ECE in the tables uses HELM's equal-mass bins)."""
    grouped: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for confidence, correct in pairs:
        grouped[min(bins - 1, max(0, int(confidence * bins)))].append((confidence, correct))
    return [
        ReliabilityBin(
            k / bins, (k + 1) / bins, len(group), sum(c for c, _ in group) / len(group), sum(ok for _, ok in group) / len(group)
        )
        for k, group in enumerate(grouped)
        if group
    ]


def reliability_diagram(series: Sequence[tuple[Series, Sequence[ReliabilityBin], float | None]], title: str) -> str:
    """Accuracy against confidence per bin, one line per series, dot area by count; the diagonal is perfect calibration."""
    size, left, top = 260, 44, 14
    width, height = left + size + 180, top + size + 40
    x, y = Axis(0, 1, left, size), Axis(0, 1, top, size, flip=True)
    body = [f'<rect x="{left}" y="{top}" width="{size}" height="{size}" class="plot"/>']
    for tick in (0, 0.25, 0.5, 0.75, 1):
        body.append(f'<line x1="{x(tick)}" y1="{y(0)}" x2="{x(tick)}" y2="{y(0) + 4}" class="axis"/>')
        body.append(f'<text x="{x(tick)}" y="{y(0) + 16}" text-anchor="middle">{tick:g}</text>')
        body.append(f'<text x="{left - 6}" y="{y(tick) + 4}" text-anchor="end">{tick:g}</text>')
    body.append(f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" class="diagonal"/>')
    body.append(f'<text x="{x(0.5)}" y="{height - 4}" text-anchor="middle">confidence</text>')
    body.append(f'<text x="12" y="{y(0.5)}" text-anchor="middle" transform="rotate(-90 12 {y(0.5)})">accuracy</text>')
    most = max((b.n for _, bins, _ in series for b in bins), default=1)
    for index, (line, bins, ece) in enumerate(series):
        points = " ".join(f"{x(b.confidence):.1f},{y(b.accuracy):.1f}" for b in bins)
        body.append(f'<polyline points="{points}" fill="none" stroke="{line.colour}" stroke-width="2"/>')
        for b in bins:
            radius = 2.5 + 5 * math.sqrt(b.n / most)
            tip = f"{line.label}: confidence {b.low:g}–{b.high:g}, n={b.n}, mean confidence {fmt(b.confidence)}, accuracy {fmt(b.accuracy)}"
            body.append(
                f'<circle cx="{x(b.confidence):.1f}" cy="{y(b.accuracy):.1f}" r="{radius:.1f}" fill="{line.colour}" '
                f'fill-opacity="0.7"><title>{esc(tip)}</title></circle>'
            )
        legend_y = top + 12 + 18 * index
        note = f" (ECE {fmt(ece)})" if ece is not None else ""
        body.append(f'<rect x="{left + size + 14}" y="{legend_y - 9}" width="10" height="10" fill="{line.colour}"/>')
        body.append(f'<text x="{left + size + 30}" y="{legend_y}">{esc(_short(line.label + note, 26))}</text>')
    return _svg(width, height, title, body, "chart reliability")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scale(values: Sequence[float]) -> tuple[float, float]:
    """An axis from 0 (or below, for negative numbers) to 1, or further when a number is larger."""
    low = min([0.0, *values])
    high = max([1.0 if all(v <= 1 for v in values) else 0.0, *values])
    return low, high if high > low else low + 1


def _interval(metric: MetricResult) -> tuple[float | None, float | None]:
    ci = metric.get("ci95") or (None, None)
    return (ci[0], ci[1]) if len(ci) == 2 else (None, None)


def before_after_chart(rows: Sequence[tuple[str, Mapping[str, MetricResult]]], title: str, after_colour: str) -> str:
    """Per metric: the original score (grey), the perturbed one (colour) with 95% intervals, and a tick at the worst case.

    ``rows`` are (metric name, {"before", "after", "worst"} metric results) from a report's perturbation table.
    """
    numbers = [
        v
        for _, entry in rows
        for key in ("before", "after", "worst")
        for v in (entry.get(key, {}).get("value"), *_interval(entry.get(key, {})))
        if isinstance(v, int | float)
    ]
    low, high = _scale(numbers)
    label_width, plot, bar, row_height, top = 190, 300, 11, 34, 24
    width, height = label_width + plot + 60, top + row_height * len(rows) + 24
    x = Axis(low, high, label_width, plot)
    body = [
        f'<rect x="{label_width}" y="{top - 10}" width="10" height="10" fill="{BEFORE_COLOUR}"/>',
        f'<text x="{label_width + 14}" y="{top - 1}">before</text>',
        f'<rect x="{label_width + 70}" y="{top - 10}" width="10" height="10" fill="{after_colour}"/>',
        f'<text x="{label_width + 84}" y="{top - 1}">after</text>',
        f'<line x1="{label_width + 140}" y1="{top - 10}" x2="{label_width + 140}" y2="{top}" class="worst"/>',
        f'<text x="{label_width + 146}" y="{top - 1}">worst case</text>',
    ]
    for index, (name, entry) in enumerate(rows):
        y0 = top + 6 + index * row_height
        body.append(f'<text x="{label_width - 6}" y="{y0 + bar + 3}" text-anchor="end">{esc(_short(name, 30))}</text>')
        for offset, key, fill in ((0, "before", BEFORE_COLOUR), (bar + 1, "after", after_colour)):
            result = entry.get(key) or {}
            value = result.get("value")
            if not isinstance(value, int | float):
                continue
            start, end = sorted((x(max(low, 0.0)), x(value)))
            tip = f"{name} {key}: {fmt(value)} (95% CI {fmt(_interval(result)[0])}–{fmt(_interval(result)[1])})"
            body.append(
                f'<rect x="{start:.1f}" y="{y0 + offset}" width="{max(end - start, 0.5):.1f}" height="{bar}" fill="{fill}">'
                f"<title>{esc(tip)}</title></rect>"
            )
            ci_low, ci_high = _interval(result)
            if ci_low is not None and ci_high is not None:
                mid = y0 + offset + bar / 2
                body.append(f'<line x1="{x(ci_low):.1f}" y1="{mid}" x2="{x(ci_high):.1f}" y2="{mid}" class="whisker"/>')
            body.append(f'<text x="{label_width + plot + 8}" y="{y0 + offset + bar - 1}">{fmt(value)}</text>')
        worst = (entry.get("worst") or {}).get("value")
        if isinstance(worst, int | float):
            body.append(f'<line x1="{x(worst):.1f}" y1="{y0 - 2}" x2="{x(worst):.1f}" y2="{y0 + 2 * bar + 3}" class="worst"/>')
    body.append(f'<line x1="{x(low)}" y1="{height - 18}" x2="{x(high)}" y2="{height - 18}" class="axis"/>')
    for tick in (low, (low + high) / 2, high):
        body.append(f'<text x="{x(tick):.1f}" y="{height - 5}" text-anchor="middle">{fmt(tick)}</text>')
    return _svg(width, height, title, body, "chart before-after")


def group_bars(groups: Mapping[str, GroupStats], worst: str | None, best: str | None, title: str, fill: str) -> str:
    """One bar per group's mean, labelled with its n; the worst group is outlined in red, the best in green."""
    names = list(groups)
    means = [groups[name].get("mean") for name in names]
    low, high = _scale([m for m in means if isinstance(m, int | float)])
    label_width, plot, bar, row_height, top = 190, 300, 14, 20, 6
    width, height = label_width + plot + 100, top + row_height * len(names) + 22
    x = Axis(low, high, label_width, plot)
    body = []
    for index, (name, mean) in enumerate(zip(names, means, strict=True)):
        y0 = top + index * row_height
        n = groups[name].get("n")
        body.append(f'<text x="{label_width - 6}" y="{y0 + bar - 2}" text-anchor="end">{esc(_short(name, 30))}</text>')
        if not isinstance(mean, int | float):
            continue
        start, end = sorted((x(max(low, 0.0)), x(mean)))
        mark = ' class="worst-group"' if name == worst else ' class="best-group"' if name == best else ""
        body.append(
            f'<rect{mark} x="{start:.1f}" y="{y0}" width="{max(end - start, 0.5):.1f}" height="{bar}" fill="{fill}">'
            f"<title>{esc(f'{name}: mean {fmt(mean)}, n={n}')}</title></rect>"
        )
        body.append(f'<text x="{label_width + plot + 8}" y="{y0 + bar - 2}">{fmt(mean)} (n={esc(n)})</text>')
    body.append(f'<line x1="{x(low)}" y1="{height - 18}" x2="{x(high)}" y2="{height - 18}" class="axis"/>')
    for tick in (low, (low + high) / 2, high):
        body.append(f'<text x="{x(tick):.1f}" y="{height - 5}" text-anchor="middle">{fmt(tick)}</text>')
    return _svg(width, height, title, body, "chart groups")


@dataclass(frozen=True, slots=True)
class IntervalRow:
    """One dot-and-whisker row: a label, the value and its 95% interval, its colour, and a link to follow."""

    label: str
    value: float
    low: float | None
    high: float | None
    colour: str
    href: str
    title: str = ""


def nice_ticks(low: float, high: float, most: int = 6) -> list[float]:
    """Round tick values over [low, high] (steps of 1, 2, 2.5 or 5 times a power of ten), at most ``most`` of them."""
    span = high - low
    if span <= 0 or not math.isfinite(span):
        return [low]
    for power in range(math.floor(math.log10(span / most)), math.floor(math.log10(span)) + 2):
        for mantissa in (1.0, 2.0, 2.5, 5.0):
            step = mantissa * 10.0**power
            first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
            if last - first + 1 <= most:
                return [round(k * step, 12) for k in range(first, last + 1)]
    return [low, high]


def interval_chart(rows: Sequence[IntervalRow], title: str) -> str:
    """One row per label in the order given: a dot at the value, a whisker over its interval; each row is a link."""
    numbers = [v for row in rows for v in (row.value, row.low, row.high) if v is not None]
    low, high = _scale(numbers)
    label_width, plot, row_height, top = 290, 340, 18, 8
    width, height = label_width + plot + 70, top + row_height * len(rows) + 24
    x = Axis(low, high, label_width, plot)
    body = [f'<rect x="{label_width}" y="{top - 4}" width="{plot}" height="{row_height * len(rows) + 4}" class="plot"/>']
    for tick in nice_ticks(low, high):
        body.append(f'<line x1="{x(tick):.1f}" y1="{top - 4}" x2="{x(tick):.1f}" y2="{height - 18}" class="grid-line"/>')
        body.append(f'<text x="{x(tick):.1f}" y="{height - 5}" text-anchor="middle">{tick:g}</text>')
    for index, row in enumerate(rows):
        mid = top + index * row_height + row_height / 2
        tip = f"{row.title or row.label}: {fmt(row.value)} (95% CI {fmt(row.low)}–{fmt(row.high)})"
        parts = [f'<text x="{label_width - 6}" y="{mid + 4:.1f}" text-anchor="end">{esc(_short(row.label, 42))}</text>']
        if row.low is not None and row.high is not None:
            parts.append(f'<line x1="{x(row.low):.1f}" y1="{mid:.1f}" x2="{x(row.high):.1f}" y2="{mid:.1f}" class="whisker"/>')
        parts.append(f'<circle cx="{x(row.value):.1f}" cy="{mid:.1f}" r="4" fill="{row.colour}"/>')
        parts.append(f'<text x="{label_width + plot + 8}" y="{mid + 4:.1f}">{fmt(row.value)}</text>')
        body.append(f'<a href="{esc(row.href)}"><title>{esc(tip)}</title>{"".join(parts)}</a>')
    return _svg(width, height, title, body, "chart intervals")
