"""What every adaptation method shares: how prompts are written (``AdapterSpec``), what an instance asks the model
(``Plan``), what its answer reads as (``Completion``), and the two roles a method and the prompt layout play for each
other (``AnswerMethod``, ``Layout``). A leaf below :mod:`.adaptation` and the method modules, so none imports another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol

from .models.base import GenerationRequest, GenerationResult, LoglikelihoodRequest, LoglikelihoodResult
from .scenarios.instance import Instance


@dataclass(frozen=True)
class AdapterSpec:
    """How prompts are written. Field names and meanings are those of HELM's ``AdapterSpec``.

    ``instructions`` is followed by ``instance_prefix`` like every block; HELM's run specs end their instructions with a
    newline (their helpers add one), which is the blank line before the first instance. ``seed`` is HELM's train trial index, which seeds the draw of in-context
    examples. ``per_group`` draws them, and fills ``{group}`` in the instructions, per instance group, as HELM
    runs MMLU one subject at a time. ``stop`` is HELM's ``stop_sequences``.
    """

    method: str = "generation"
    global_prefix: str = ""
    global_suffix: str = ""
    instructions: str = ""
    input_prefix: str = ""
    input_suffix: str = "\n"
    reference_prefix: str = "A. "
    reference_suffix: str = "\n"
    output_prefix: str = "Answer: "
    output_suffix: str = "\n"
    instance_prefix: str = "\n"
    max_train_instances: int = 5
    sample_train: bool = True
    multi_label: bool = False
    per_group: bool = False
    max_tokens: int = 32
    stop: tuple[str, ...] = ("\n",)
    seed: int = 0
    chunk_words: int = 128
    """language_modeling: words per scored piece of a document (each piece must fit the model's window)."""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "stop": list(self.stop)}


@dataclass(frozen=True, slots=True)
class Completion:
    """What the model answered for one instance, in the adapter's answer space.

    ``gold`` holds the correct outputs in that space (letters for the joint method). The reference metrics compare
    the method's ``reference_inputs`` instead, HELM's answer space: the same for every method but the joint one,
    which maps the letter to its option as HELM's ``output_mapping`` does. ``choice_scores`` are the numbers the
    options were ranked by when those are not the log-probabilities themselves (calibrated: original minus
    calibration log-probability; ranking: HELM's Yes/No key), and ``ranking`` lists option indices best first.
    ``num_bytes`` and ``scored_tokens`` describe the document a language-modeling answer scored (``logprob`` is its
    total). ``truncated_tokens`` is how many prompt tokens the model dropped from the left to fit its window (the
    most over the options when they are scored); ``cached`` is True when every answer came from the response cache,
    so ``seconds`` is replayed.
    """

    text: str
    prompt: str
    gold: tuple[str, ...]
    choices: tuple[str, ...] = ()
    predicted_index: int | None = None
    probability: float | None = None
    logprob: float | None = None
    choice_logprobs: tuple[float, ...] = ()
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    correct_indices: tuple[int, ...] = field(default=())
    truncated_tokens: int = 0
    cached: bool = field(default=False, compare=False)  # where the answer came from, not part of it
    choice_scores: tuple[float, ...] = ()
    ranking: tuple[int, ...] = ()
    num_bytes: int = 0
    scored_tokens: int = 0

    @property
    def correct(self) -> bool | None:
        """For multiple choice: whether the chosen option is a right one; None for free generation."""
        if not self.choices:
            return None
        return self.predicted_index is not None and self.predicted_index in self.correct_indices

    def to_record(self) -> dict[str, Any]:
        """Plain builtin types, one dict per item: its fields by name (tuples as lists), plus ``correct``.

        Built field by field rather than with ``dataclasses.asdict``, whose recursive deep copy was the largest
        per-item cost of a warm run (every value here is already a builtin).
        """
        record = {name: getattr(self, name) for name in _COMPLETION_FIELDS}
        record["correct"] = self.correct
        for key in _COMPLETION_TUPLES:
            record[key] = list(record[key])
        return record


_COMPLETION_FIELDS = tuple(f.name for f in fields(Completion))
_COMPLETION_TUPLES = ("gold", "choices", "choice_logprobs", "correct_indices", "choice_scores", "ranking")


@dataclass(frozen=True, slots=True)
class Plan:
    """The requests one instance needs, kept with the prompt for the record."""

    prompt: str
    generation: GenerationRequest | None = None
    loglikelihood: tuple[LoglikelihoodRequest, ...] = ()


class Layout(Protocol):
    """What a method builds on: the prompt layout of one run (:class:`.adaptation.Adapter`)."""

    spec: AdapterSpec

    def answer(self, instance: Instance) -> str: ...

    def answered_block(self, instance: Instance, answer: str) -> str: ...

    def question(self, instance: Instance) -> str: ...

    def prompt(self, instance: Instance, block: str, *, examples: bool = True) -> str: ...

    def scored_option(self, instance: Instance, option: str, *, examples: bool = True) -> LoglikelihoodRequest: ...


class AnswerMethod(Protocol):
    """One adaptation method (HELM's ``AdapterSpec.method``): what it asks of an instance and how it reads the answer.

    ``options_block`` is written after the input (the labelled options of joint multiple choice, else nothing);
    ``answers`` are an example's correct outputs in the method's answer space; ``reference_inputs`` is what the
    reference metrics (exact match, F1, ...) compare: the answer and the correct outputs, in HELM's answer space.
    """

    def check(self, instance: Instance) -> None: ...

    def options_block(self, instance: Instance) -> str: ...

    def answers(self, instance: Instance) -> list[str]: ...

    def example_block(self, example: Instance) -> str: ...

    def plan(self, instance: Instance) -> Plan: ...

    def interpret(
        self, instance: Instance, plan: Plan, generated: GenerationResult | None, scored: Sequence[LoglikelihoodResult]
    ) -> Completion: ...

    def reference_inputs(self, instance: Instance, completion: Completion) -> tuple[str, tuple[str, ...]]: ...
