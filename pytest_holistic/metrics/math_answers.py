r"""Answer matching for math word problems, as HELM Lite scores GSM8K and MATH.

Sources: HELM 0.5.16, ``helm/benchmark/metrics/evaluate_reference_metrics.py`` (``final_number_exact_match``, GSM8K's
metric beside ``exact_match_indicator``) and ``helm/benchmark/scenarios/math_scenario.py`` (``is_equiv``,
``is_equiv_chain_of_thought``, ``get_answer``, ``_strip_string``: MATH's ``math_equiv`` and
``math_equiv_chain_of_thought``), whose normalisation rules come from Hendrycks et al. 2021's MATH code
(github.com/hendrycks/math). Written here from those rules; ``tests/conformance/test_helm_metrics.py`` compares every
function with HELM's own outputs. HELM's quirks are kept on purpose, since a score that differs from HELM's on the
same answers is not HELM's number:

* the final number is the last match of ``-?[\d,]+(?:.\d+)?`` with its commas dropped; HELM leaves the ``.``
  unescaped, so it is any character but a newline: "1, 2" reads as "1 2" and "2x3" as "2x3", a lone comma as
  an empty number; and ``\d`` is any Unicode digit;
* a side that the MATH normalisation cannot read (``\text{ `` twice, ``\sqrt`` or ``\frac`` with nothing after it)
  makes the two *raw* strings be compared instead;
* only ``\boxed{...}`` is unwrapped: HELM looks for ``\fbox`` when there is no ``\boxed``, then reads only a
  ``\boxed{`` prefix, so an ``\fbox`` answer reads as no answer, and two sides with no answer are equivalent (1.0).
"""

from __future__ import annotations

import re

from .base import reference_metric

HELM_GSM = "Cobbe et al. 2021 (GSM8K); HELM 0.5.16 evaluate_reference_metrics.py (final_number_exact_match)"
HELM_MATH = "Hendrycks et al. 2021 (MATH, its answer normalisation); HELM 0.5.16 math_scenario.py (is_equiv)"

_NUMBER = re.compile(r"-?[\d,]+(?:.\d+)?")
_BOXED = "\\boxed"
_UNITS = "\\text{ "


class UnreadableAnswer(ValueError):
    """Where HELM's ``_strip_string`` raises; its ``is_equiv`` then compares the raw strings."""


def final_number(text: str) -> str:
    """The last number written in ``text``, commas removed ("" when there is none)."""
    numbers = _NUMBER.findall(text)
    return numbers[-1].replace(",", "") if numbers else ""


@reference_metric(citation=HELM_GSM, strip_prediction=True)
def final_number_exact_match(gold: str, prediction: str) -> float:
    """1 if the last number of the prediction equals the last number of the reference ("... so 72 clips" against "72").

    The two numbers are compared as HELM's ``exact_match`` compares texts: stripped, and a prediction with no number
    scores 0, even against a reference without one.
    """
    predicted = final_number(prediction)
    return float(bool(predicted) and predicted.strip() == final_number(gold).strip())


def _braced_fractions(text: str) -> str:
    r"""``\frac12`` -> ``\frac{1}{2}``, ``\frac1{72}`` -> ``\frac{1}{72}``; a one-character tail leaves the text as it was."""
    head, *tails = text.split("\\frac")
    parts = [head]
    for tail in tails:
        if not tail:
            raise UnreadableAnswer("\\frac with nothing after it")
        if tail[0] == "{":
            parts.append("\\frac" + tail)
        elif len(tail) < 2:
            return text
        elif tail[1] == "{":
            parts.append("\\frac{" + tail[0] + "}" + tail[1:])
        else:
            parts.append("\\frac{" + tail[0] + "}{" + tail[1] + "}" + tail[2:])
    return "".join(parts)


def _braced_roots(text: str) -> str:
    r"""``\sqrt3`` -> ``\sqrt{3}`` (one character taken as the radicand)."""
    head, *tails = text.split("\\sqrt")
    parts = [head]
    for tail in tails:
        if not tail:
            raise UnreadableAnswer("\\sqrt with nothing after it")
        parts.append("\\sqrt" + tail if tail[0] == "{" else "\\sqrt{" + tail[0] + "}" + tail[1:])
    return "".join(parts)


def _slash_fraction(text: str) -> str:
    r"""``2/3`` -> ``\frac{2}{3}``, only for two integers written in Python's own form (no sign '+', no zero padding)."""
    sides = text.split("/")
    if len(sides) != 2:
        return text
    try:
        numerator, denominator = int(sides[0]), int(sides[1])
    except ValueError:
        return text
    if text != f"{numerator}/{denominator}":
        return text
    return f"\\frac{{{numerator}}}{{{denominator}}}"


def normalize_math(text: str) -> str:
    r"""MATH's answer normal form (HELM's ``_strip_string``), so ``\dfrac12``, ``0.5`` and ``1/2`` compare equal.

    In order: newlines, ``\!``, doubled backslashes, ``tfrac``/``dfrac``, ``\left``/``\right``, degrees, ``\$``,
    units after ``\text{ ``, ``\%``; a leading zero added before "." where a space, a brace or the start precedes it;
    a left side of at most 2 characters before the one "=" dropped ("k = 3"); roots and fractions braced; spaces
    removed; "0.5" and ``a/b`` written as ``\frac``. Raises ``UnreadableAnswer`` where HELM's function raises.
    """
    text = text.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    text = text.replace("tfrac", "frac").replace("dfrac", "frac")
    text = text.replace("\\left", "").replace("\\right", "")
    text = text.replace("^{\\circ}", "").replace("^\\circ", "").replace("\\$", "")
    kept, *units = text.split(_UNITS)
    if len(units) > 1:
        raise UnreadableAnswer("\\text{ more than once")
    text = kept.replace("\\%", "").replace(" .", " 0.").replace("{.", "{0.")
    if not text:
        return text
    if text[0] == ".":
        text = "0" + text
    sides = text.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:
        text = sides[1]
    text = _braced_fractions(_braced_roots(text).replace(" ", ""))
    if text == "0.5":
        text = "\\frac{1}{2}"
    return _slash_fraction(text)


def boxed_answer(solution: str | None) -> str | None:
    r"""What the last ``\boxed{...}`` of a solution holds (HELM's ``get_answer``), braces balanced; None without one."""
    if solution is None:
        return None
    start = solution.rfind(_BOXED)
    if start < 0 or not solution.startswith(_BOXED + "{", start):
        return None
    depth = 0
    for end in range(start + len(_BOXED), len(solution)):
        if solution[end] == "{":
            depth += 1
        elif solution[end] == "}":
            depth -= 1
            if depth == 0:
                return solution[start + len(_BOXED) + 1 : end]
    return None


def equivalent(first: str | None, second: str | None) -> float:
    """1.0 if both answers have the same MATH normal form (HELM's ``is_equiv``); both missing counts as equal."""
    if first is None or second is None:
        return float(first is None and second is None)
    try:
        return float(normalize_math(first) == normalize_math(second))
    except UnreadableAnswer:
        return float(first == second)


@reference_metric(citation=HELM_MATH, strip_prediction=True)
def math_equiv(gold: str, prediction: str) -> float:
    r"""1 if the answer equals the reference up to MATH's formatting (``\dfrac12`` = ``0.5`` = ``1/2``, units, ``\$``).

    Unlike exact match, an empty answer matches an empty (or blank) reference.
    """
    return equivalent(gold, prediction)


@reference_metric(citation=HELM_MATH, strip_prediction=True)
def math_equiv_chain_of_thought(gold: str, prediction: str) -> float:
    r"""``math_equiv`` of what the last ``\boxed{}`` holds on each side (MATH with chain of thought).

    A side with no ``\boxed{}`` has no answer; two such sides count as equivalent, as in HELM.
    """
    return equivalent(boxed_answer(gold), boxed_answer(prediction))
