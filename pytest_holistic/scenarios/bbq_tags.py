"""The tags a BBQ instance carries: HELM's words for its context and question type, and which option plays which role.

The BBQ scenario writes them (``scenarios/synthetic/bbq.py``, or a user's own BBQ data) and the BBQ bias metrics
read them back (through ``report/columns.py``), so the vocabulary lives with the instances both sides share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

AMBIGUOUS, NON_AMBIGUOUS = "ambiguous", "non-ambiguous"
NEGATIVE, NON_NEGATIVE = "negative", "non-negative"
ROLES = ("target", "non_target", "unknown")


@dataclass(frozen=True)
class BBQTags:
    """The BBQ facts of one instance: context and question type, and which option plays which role."""

    ambiguous: bool
    negative: bool
    target: int
    unknown: int
    non_target: int | None = None

    def role(self, index: int | None) -> str:
        """The role of option ``index`` (None: an answer that is none of the options)."""
        if index is not None:
            for name in ROLES:
                if getattr(self, name) == index:
                    return name
        return "other"


def bbq_tags(*, ambiguous: bool, negative: bool, target: int, unknown: int, non_target: int | None) -> tuple[str, ...]:
    """``Instance.tags`` for a BBQ instance: HELM's tag words plus the option index of each role."""
    tags = [
        AMBIGUOUS if ambiguous else NON_AMBIGUOUS,
        NEGATIVE if negative else NON_NEGATIVE,
        f"target:{target}",
        f"unknown:{unknown}",
    ]
    if non_target is not None:
        tags.append(f"non_target:{non_target}")
    return tuple(tags)


def read_bbq_tags(tags: Sequence[str]) -> BBQTags | None:
    """The BBQ facts in ``tags``, or None for an instance that is not tagged as BBQ."""
    present = set(tags)
    if not ({AMBIGUOUS, NON_AMBIGUOUS} & present and {NEGATIVE, NON_NEGATIVE} & present):
        return None
    roles: dict[str, int] = {}
    for tag in tags:
        name, _, value = tag.partition(":")
        if name in ROLES and value.isdigit():
            roles[name] = int(value)
    if "target" not in roles or "unknown" not in roles:
        return None
    return BBQTags(AMBIGUOUS in present, NEGATIVE in present, roles["target"], roles["unknown"], roles.get("non_target"))
