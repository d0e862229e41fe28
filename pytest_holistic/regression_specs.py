"""``--holistic-fail-on-regression [SCENARIO:]METRIC:MARGIN``: the checks a paired comparison with a baseline makes,
parsed once when the options are read (:mod:`.settings`) and judged by :mod:`.report.regression`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from . import metrics as registry
from .errors import UserError
from .metrics.base import EFFICIENCY

FLAG = "--holistic-fail-on-regression"
SPEC_FORM = "write METRIC:MARGIN or SCENARIO:METRIC:MARGIN, MARGIN a number >= 0 (e.g. 'quasi_exact_match:0.02')"


@dataclass(frozen=True)
class RegressionSpec:
    """One check: a per-instance metric, the drop it tolerates, and optionally the one scenario it is about."""

    metric: str
    margin: float
    scenario: str | None
    text: str


def _per_instance_names() -> list[str]:
    return sorted({*registry.BUILTIN, *registry.SCORED})


def parse_spec(text: str) -> RegressionSpec:
    """``[scenario:]metric:margin``, checked: a malformed spec or a misspelt or unpairable metric is a UserError."""
    head, colon, margin_text = str(text).strip().rpartition(":")
    prefix, _, metric = head.rpartition(":")
    metric, scenario = metric.strip(), prefix.strip() or None
    try:
        margin = float(margin_text)
    except ValueError:
        margin = math.nan
    if not colon or not metric or not math.isfinite(margin) or margin < 0 or (scenario is not None and ":" in scenario):
        raise UserError(f"{FLAG} {text!r}: {SPEC_FORM}")
    known = _per_instance_names()
    if metric in known:
        return RegressionSpec(metric, margin, scenario, str(text).strip())
    what = None
    if metric in registry.POPULATION:
        what = "a scenario-level metric, with no per-instance values to pair"
    elif metric in EFFICIENCY:
        what = "an efficiency figure, not a per-instance score"
    elif "." in metric:
        what = "a derived number (robustness, fairness, a bound), not a per-instance score"
    if what is not None:
        raise UserError(f"{FLAG} {text!r}: {metric!r} is {what}; name a per-instance score such as exact_match")
    folded = {name.lower(): name for name in known}
    close = [folded[metric.lower()]] if metric.lower() in folded else difflib.get_close_matches(metric, known, n=1, cutoff=0.8)
    if close:
        raise UserError(f"{FLAG} {text!r}: no metric {metric!r}; did you mean {close[0]!r}?")
    return RegressionSpec(metric, margin, scenario, str(text).strip())  # a score the tests record under their own name


def check_regression_specs(texts: Sequence[str], baseline: object) -> tuple[RegressionSpec, ...]:
    """The specs, each parsed and checked; they need a baseline to compare with (a one-line UserError otherwise)."""
    specs = tuple(parse_spec(str(text)) for text in texts)
    if specs and baseline is None:
        raise UserError(
            f"{FLAG} {specs[0].text!r} needs --holistic-baseline REPORT_JSON (the stored report.json to compare with); "
            "add it, or drop the option"
        )
    return specs
