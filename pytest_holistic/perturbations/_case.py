"""HELM's case rule for a substituted word, shared by every perturbation that swaps words.

The rule is ``helm.common.general.match_case`` (HELM 0.5.16), restated: a source whose every character is
lower case gives the target in lower case; one whose every character is upper case gives it in upper case;
else a source starting with a capital gives ``target.capitalize()``; anything else keeps the target as written.
"Every character" includes spaces and apostrophes, which are neither, so ``WE WILL`` gives ``We'll`` and
``it's`` (the apostrophe is not lower case) keeps the target as written. An empty source counts as lower case.
"""

from __future__ import annotations


def case_rule(source: str) -> str:
    """Which branch of the rule ``source`` takes: ``lower``, ``upper``, ``capitalize`` or ``as_written``."""
    if all(char.islower() for char in source):
        return "lower"
    if all(char.isupper() for char in source):
        return "upper"
    return "capitalize" if source[:1].isupper() else "as_written"


def match_case(source: str, target: str) -> str:
    """``target`` written in the case of ``source``, by HELM's rule (see the module docstring)."""
    rule = case_rule(source)
    if rule == "as_written":
        return target
    written: str = getattr(target, rule)()
    return written
