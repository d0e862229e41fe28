"""The unit of evaluation: one frozen instance with a stable id, its input and its references."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import ScenarioError


@dataclass(frozen=True)
class Reference:
    """One reference output; ``correct`` tags it as a right answer (HELM's reference tags).

    ``relevance`` is a graded judgment for ranking (TREC qrels: 0-3); None when the reference has none, in which
    case ranking metrics read ``correct`` as 1 or 0 (HELM's binary MS MARCO track).
    """

    text: str
    correct: bool = True
    relevance: float | None = None

    def __post_init__(self) -> None:
        grade = self.relevance
        if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int | float) or not grade >= 0):
            raise ScenarioError(f"reference {self.text[:40]!r}: relevance {grade!r} must be a number >= 0 (or None)")

    @property
    def gain(self) -> float:
        """The relevance a ranking metric uses: the graded judgment, else 1 for a correct reference and 0 otherwise."""
        return float(self.relevance) if self.relevance is not None else float(self.correct)

    def to_record(self) -> dict[str, object]:
        """``relevance`` only when set, so instances without grades keep their records (and dataset digests)."""
        record: dict[str, object] = {"text": self.text, "correct": self.correct}
        if self.relevance is not None:
            record["relevance"] = self.relevance
        return record


def _as_references(values: Iterable[object] | str | Reference) -> tuple[Reference, ...]:
    """References from strings (correct answers) and ``Reference`` objects; one of either stands for a tuple of one."""
    if isinstance(values, str | Reference):
        values = (values,)
    references = []
    for value in values:
        if isinstance(value, Reference):
            references.append(value)
        elif isinstance(value, str):
            references.append(Reference(value, True))
        else:
            raise ScenarioError(
                f"reference {value!r} is neither a string nor a Reference; "
                "pass strings for correct answers or Reference(text, correct=False) for wrong options"
            )
    return tuple(references)


@dataclass(frozen=True)
class Contrast:
    """A contrast-set edit of an instance (Gardner et al. 2020): a changed input whose gold answer changes too."""

    input: str
    references: tuple[Reference, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.input, str):
            raise ScenarioError(f"contrast input must be a string, got {type(self.input).__name__}")
        object.__setattr__(self, "references", _as_references(self.references))

    def to_record(self) -> dict[str, object]:
        return {"input": self.input, "references": [r.to_record() for r in self.references]}


@dataclass(frozen=True)
class Instance:
    """An eval instance. ``id`` becomes the pytest param id, so it must be stable and unique.

    ``references`` lists the reference outputs; plain strings count as correct. For multiple choice
    the references are the options, in order, with the right one(s) tagged correct.

    ``helm_id`` is the id HELM's own scenario class gives the same row (positional ``id{n}`` for most), set by the
    loaders of scenarios that follow HELM. Perturbations draw from ``Random(seed_id)`` as HELM draws from
    ``Random(instance.id)``, so a run gets HELM's variants while its pytest ids stay readable and stable.
    """

    id: str
    input: str
    references: tuple[Reference, ...] = ()
    split: str = "test"
    group: str | None = None
    tags: tuple[str, ...] = field(default=())
    perturbation: str | None = None
    contrasts: tuple[Contrast, ...] = field(default=(), repr=False)
    helm_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ScenarioError(f"instance id {self.id!r} must be a non-empty string; give every instance a stable id")
        if not isinstance(self.input, str):
            raise ScenarioError(f"instance {self.id!r}: input must be a string, got {type(self.input).__name__}")
        object.__setattr__(self, "references", _as_references(self.references))
        object.__setattr__(self, "tags", tuple(str(tag) for tag in self.tags))
        object.__setattr__(self, "contrasts", tuple(self.contrasts))
        if self.helm_id is not None and (not isinstance(self.helm_id, str) or not self.helm_id):
            raise ScenarioError(f"instance {self.id!r}: helm_id {self.helm_id!r} must be a non-empty string or None")

    @property
    def seed_id(self) -> str:
        """What seeds the instance's random draws: HELM's id where the scenario follows HELM, else its own id."""
        return self.helm_id if self.helm_id is not None else self.id

    @classmethod
    def multiple_choice(
        cls,
        id: str,
        question: str,
        choices: Sequence[str],
        answer: int | str,
        **metadata: object,
    ) -> Instance:
        """Build a multiple-choice instance from options and the index (or text) of the right one."""
        if isinstance(answer, bool) or not isinstance(answer, int | str):
            raise ScenarioError(f"instance {id!r}: answer {answer!r} must be the index or the text of the right choice")
        if isinstance(answer, str):
            if answer not in choices:
                raise ScenarioError(f"instance {id!r}: answer {answer!r} is not one of the choices {list(choices)!r}")
            answer = list(choices).index(answer)
        if not 0 <= answer < len(choices):
            raise ScenarioError(f"instance {id!r}: answer index {answer} is outside the {len(choices)} choices")
        references = tuple(Reference(str(text), index == answer) for index, text in enumerate(choices))
        return cls(id=id, input=question, references=references, **metadata)  # type: ignore[arg-type]

    @property
    def choices(self) -> tuple[str, ...]:
        """Every reference text, in order: the options of a multiple-choice instance."""
        return tuple(reference.text for reference in self.references)

    @property
    def correct_references(self) -> tuple[str, ...]:
        return tuple(reference.text for reference in self.references if reference.correct)

    @property
    def correct_indices(self) -> tuple[int, ...]:
        return tuple(index for index, reference in enumerate(self.references) if reference.correct)

    def to_record(self) -> dict[str, object]:
        """Plain builtin types, for reports and for crossing process boundaries."""
        return {
            "id": self.id,
            "input": self.input,
            "references": [r.to_record() for r in self.references],
            "split": self.split,
            "group": self.group,
            "tags": list(self.tags),
            "perturbation": self.perturbation,
            **({"contrasts": [contrast.to_record() for contrast in self.contrasts]} if self.contrasts else {}),
            **({"helm_id": self.helm_id} if self.helm_id is not None else {}),
        }
