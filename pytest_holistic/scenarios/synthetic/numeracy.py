"""HELM's numeracy task: infer an integer polynomial from points and give its value at a new point.

Procedure from HELM ``numeracy_scenario.py`` (stanford-crfm/helm), its ``function`` mode (every instance has
its own relation): coefficients are drawn uniformly from the relation type's ranges, redrawn until the
constant is non-zero, the top-degree coefficients do not sum to zero and each variable's own terms do not cancel; points come
without repetition from HELM's grid (linear: x in [-100, 100]; parabola: x in [0, 200]; plane: x, y in
[-10, 10] with x <= y; paraboloid: x, y in [0, 20] with x <= y, so no symmetry helps). The layout is HELM's:
a header naming the variables (``x, y``), one line per point with values joined by ``", "``, and the query
point followed by ``,``: the model writes the output value.

HELM's function mode shows 100 points per relation and evaluates up to 1000 relations (seed 0); its prompt
builder for that mode is disabled in HELM's current code, so the layout here is the one its docstring shows,
with the header once per relation. ``points`` sets how many points the model sees.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from ...errors import ScenarioError
from ..instance import Instance, Reference
from ..scenario import Scenario
from ._common import check_sizes


@dataclass(frozen=True)
class RelationType:
    """A polynomial family: degree, number of input variables, coefficient ranges (HELM's term order) and domain."""

    degree: int
    variables: int
    ranges: tuple[tuple[int, int], ...]
    domain: tuple[int, int]


RELATIONS = {
    "linear": RelationType(1, 1, ((1, 5), (1, 5)), (-100, 100)),
    "parabola": RelationType(2, 1, ((1, 2), (0, 2), (1, 5)), (0, 200)),
    "plane": RelationType(1, 2, ((1, 5), (1, 5), (1, 5)), (-10, 10)),
    "paraboloid": RelationType(2, 2, ((1, 2), (0, 1), (1, 2), (0, 0), (0, 0), (1, 5)), (0, 20)),
}
NAMES = "xyz"


def terms(degree: int, variables: int) -> list[tuple[int, ...]]:
    """Monomials as multisets of variable indices, highest degree first (HELM's order): x^2, xy, y^2, x, y, 1."""
    return [term for d in range(degree, -1, -1) for term in itertools.combinations_with_replacement(range(variables), d)]


def evaluate(coefficients: tuple[int, ...], relation: RelationType, point: tuple[int, ...]) -> int:
    """The polynomial's value at ``point``."""
    total = 0
    for coefficient, term in zip(coefficients, terms(relation.degree, relation.variables), strict=True):
        value = coefficient
        for variable in term:
            value *= point[variable]
        total += value
    return total


def _coefficients(rng: random.Random, relation: RelationType) -> tuple[int, ...]:
    monomials = terms(relation.degree, relation.variables)
    top = sum(1 for term in monomials if len(term) == relation.degree)
    for _ in range(1000):
        coefficients = tuple(rng.randint(low, high) for low, high in relation.ranges)
        # HELM's check: along each axis (the variable at 1, the others at 0) the non-constant part is non-zero.
        uses_every_variable = all(
            evaluate(coefficients, relation, tuple(int(k == variable) for k in range(relation.variables))) != coefficients[-1]
            for variable in range(relation.variables)
        )
        if coefficients[-1] and sum(coefficients[:top]) and uses_every_variable:
            return coefficients
    raise ScenarioError("numeracy: no valid coefficients in 1000 draws; the relation's ranges are too narrow")


def _grid(relation: RelationType) -> list[tuple[int, ...]]:
    low, high = relation.domain
    points = list(itertools.product(range(low, high + 1), repeat=relation.variables))
    return [p for p in points if relation.variables == 1 or p[0] <= p[1]]


def header(relation: RelationType) -> str:
    """The column names, ``x, y`` or ``x, y, z``."""
    return ", ".join(NAMES[: relation.variables + 1])


def numeracy(relation_type: str = "linear", *, points: int = 20, train: int = 5, test: int = 30, seed: int = 0) -> Scenario:
    """HELM numeracy for one relation type: each instance a fresh relation with ``points`` shown and one asked.

    Ids are ``<relation>-<split>-<n>``; the reference is the output value as an integer string.
    """
    relation = RELATIONS.get(relation_type)
    if relation is None:
        raise ScenarioError(f"numeracy: relation_type {relation_type!r} is not one of {', '.join(RELATIONS)}")
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise ScenarioError(f"numeracy: points={points!r} must be a whole number >= 1")
    check_sizes("numeracy", train, test)
    grid = _grid(relation)

    def instances() -> list[Instance]:
        rng = random.Random(f"numeracy:{relation_type}:{seed}")
        made = []
        for split, count in (("train", train), ("test", test)):
            for index in range(count):
                coefficients = _coefficients(rng, relation)
                *shown, query = rng.sample(grid, points + 1)
                lines = [header(relation)]
                lines += [", ".join(map(str, (*point, evaluate(coefficients, relation, point)))) for point in shown]
                lines.append(", ".join(map(str, query)))
                made.append(
                    Instance(
                        id=f"{relation_type}-{split}-{index}",
                        input="\n".join(lines),
                        references=(Reference(str(evaluate(coefficients, relation, query))),),
                        split=split,
                        tags=(f"coefficients:{' '.join(map(str, coefficients))}",),
                    )
                )
        return made

    return Scenario(f"numeracy_{relation_type}", local=instances, description=f"HELM numeracy ({relation_type}), seed {seed}")
