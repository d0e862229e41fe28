"""From an instance to model requests and back: prompts, few-shot examples, and reading the answer.

HELM's methods: ``generation`` (free text), ``multiple_choice_joint`` (all options in the prompt, the model
writes a letter) and ``multiple_choice_separate`` (each option scored by log-likelihood, the highest wins)
live here; the three that only score (``multiple_choice_calibrated``, ``language_modeling``, ``ranking``) each
have a small class in :mod:`.scoring_adapters`, so this module keeps the shared prompt layout and the
if-chains stay short. Every method keeps the probability the model gave its answer, which calibration
metrics need.
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from .errors import InternalError, UserError
from .metrics.base import Column
from .models.base import GenerationRequest, GenerationResult, LoglikelihoodRequest, LoglikelihoodResult
from .scenarios.instance import Instance

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LETTER = re.compile(r"^\(?([A-Z])(?![A-Za-z])")


@dataclass(frozen=True)
class AdapterSpec:
    """How prompts are written. Field names follow HELM's AdapterSpec."""

    method: str = "generation"
    instructions: str = ""
    input_prefix: str = ""
    input_suffix: str = "\n"
    output_prefix: str = "Answer: "
    output_suffix: str = "\n"
    instance_separator: str = "\n"
    max_train_instances: int = 5
    max_tokens: int = 32
    stop: tuple[str, ...] = ("\n",)
    seed: int = 0
    chunk_words: int = 128
    """language_modeling: words per scored piece of a document (each piece must fit the model's window)."""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "stop": list(self.stop)}


_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "generation": {},
    "multiple_choice_joint": {"input_prefix": "Question: ", "max_tokens": 1},
    "multiple_choice_separate": {"output_prefix": "Answer: ", "max_tokens": 0, "stop": ()},
    "multiple_choice_calibrated": {"output_prefix": "Answer: ", "max_tokens": 0, "stop": ()},
    "language_modeling": {
        "input_suffix": "", "output_prefix": "", "output_suffix": "", "max_train_instances": 0, "max_tokens": 0, "stop": ()
    },
    "ranking": {
        "input_prefix": "Query: ",
        "output_prefix": "Does the passage answer the query?\nAnswer: ",
        "max_train_instances": 4,
        "max_tokens": 0,
        "stop": (),
    },
}
METHODS = tuple(_DEFAULTS)
LOGLIKELIHOOD_METHODS = frozenset(
    {"multiple_choice_separate", "multiple_choice_calibrated", "language_modeling", "ranking"}
)
"""Methods that score text by its log-probability, so a model must return prompt log-probabilities to run them."""
SPEC_KEYS = frozenset(AdapterSpec.__dataclass_fields__) - {"method"}
_EVERY_METHOD = frozenset(
    {Column.TEXT, Column.REFERENCES, Column.GOLD_LABEL, Column.PREDICTED_LABEL, Column.CONFIDENCE, Column.CORRECT}
)
COLUMNS: Mapping[str, frozenset[Column]] = {
    "generation": _EVERY_METHOD,
    "multiple_choice_joint": _EVERY_METHOD | {Column.NUM_CHOICES},
    "multiple_choice_separate": _EVERY_METHOD | {Column.NUM_CHOICES, Column.LOGPROB_MORE, Column.LOGPROB_LESS},
    "multiple_choice_calibrated": _EVERY_METHOD | {Column.NUM_CHOICES, Column.LOGPROB_MORE, Column.LOGPROB_LESS},
    "language_modeling": frozenset({Column.DOCUMENT_LOGPROB, Column.NUM_BYTES, Column.NUM_TOKENS}),
    "ranking": _EVERY_METHOD | {Column.NUM_CHOICES, Column.RANKED_RELEVANCES, Column.RANKED_GOLD},
}
"""What each method's answers can feed to population metrics (two-option log-probabilities only from scoring)."""


def make_spec(method: str, **overrides: Any) -> AdapterSpec:
    """The spec for ``method`` with its defaults, then the marker's overrides."""
    if method not in _DEFAULTS:
        raise UserError(f"unknown adapter {method!r}; use one of {', '.join(METHODS)}")
    values = {**_DEFAULTS[method], **overrides}
    if "stop" in values:
        stop = values["stop"]
        values["stop"] = (stop,) if isinstance(stop, str) else tuple(stop or ())
    return replace(AdapterSpec(method=method), **values)


@dataclass(frozen=True, slots=True)
class Completion:
    """What the model answered for one instance, in the adapter's answer space.

    ``gold`` holds the correct outputs in that space (letters for the joint method), so
    ``metric(completion.text, completion.gold)`` is right for every method. ``choice_scores`` are the numbers the
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


def example_pool(spec: AdapterSpec, train: Sequence[Instance]) -> tuple[int, tuple[Instance, ...]]:
    """How many few-shot examples to draw and from which training instances.

    Ranking counts example *blocks* as HELM's run spec does (4: two queries, each with one relevant and one
    non-relevant passage), so only queries that have both kinds can serve.
    """
    if spec.method == "ranking":
        usable = tuple(i for i in train if any(r.correct for r in i.references) and not all(r.correct for r in i.references))
        return spec.max_train_instances // 2, usable
    return spec.max_train_instances, tuple(train)


def select_examples(train: Sequence[Instance], count: int, seed: int, scenario: str) -> tuple[Instance, ...]:
    """Few-shot examples drawn once per (scenario, seed), so every worker and rerun sees the same ones.

    Like HELM, labels are balanced: examples are taken round-robin from the groups of instances that
    share a correct answer, most frequent answer first.
    """
    if count <= 0 or not train:
        return ()
    rng = random.Random(f"{scenario}:{seed}")
    groups: dict[str, list[Instance]] = defaultdict(list)
    for instance in sorted(train, key=lambda i: i.id):
        answer = instance.correct_references[0] if instance.correct_references else ""
        groups[answer].append(instance)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    for _, members in ordered:
        rng.shuffle(members)
    chosen: list[Instance] = []
    while len(chosen) < count and any(members for _, members in ordered):
        for _, members in ordered:
            if members and len(chosen) < count:
                chosen.append(members.pop())
    rng.shuffle(chosen)
    return tuple(chosen)


class Adapter:
    """Builds prompts for one scenario run and reads the model's answers back."""

    def __init__(self, spec: AdapterSpec, examples: Sequence[Instance]) -> None:
        from .scoring_adapters import SCORING  # builds on this module's types, so imported here

        self.spec = spec
        self.examples = tuple(examples)
        self._scoring = SCORING[spec.method](self) if spec.method in SCORING else None
        for example in self.examples:
            self._check_options(example)
        self._preamble = self._build_preamble()

    def _check_options(self, instance: Instance) -> None:
        """Runs for every plan: counts the references (the options) without building ``choices``, a new tuple per read."""
        if self._scoring is not None:
            self._scoring.check(instance)
            return
        options = len(instance.references)
        if self.spec.method == "multiple_choice_joint" and not 1 < options <= len(LETTERS):
            raise UserError(f"instance {instance.id!r} has {options} options; multiple_choice_joint needs 2 to 26")
        if self.spec.method == "multiple_choice_separate" and not options:
            raise UserError(f"instance {instance.id!r} has no options; multiple_choice_separate needs references to score")

    def _options(self, instance: Instance) -> str:
        return "".join(f"{LETTERS[k]}. {text}\n" for k, text in enumerate(instance.choices))

    def _question(self, instance: Instance) -> str:
        spec = self.spec
        body = f"{spec.input_prefix}{instance.input}{spec.input_suffix}"
        if spec.method == "multiple_choice_joint":
            body += self._options(instance)
        return body + spec.output_prefix

    def _answer_text(self, instance: Instance) -> str:
        if self.spec.method == "multiple_choice_joint":
            return LETTERS[instance.correct_indices[0]] if instance.correct_indices else ""
        return instance.correct_references[0] if instance.correct_references else ""

    def _example_block(self, example: Instance) -> str:
        return self._question(example) + self._answer_text(example) + self.spec.output_suffix + self.spec.instance_separator

    def _build_preamble(self) -> str:
        parts = [self.instructions_block()]
        block = self._scoring.example_block if self._scoring is not None else self._example_block
        parts.extend(block(example) for example in self.examples)
        return "".join(parts)

    def instructions_block(self) -> str:
        """The instructions and their line break, or nothing (HELM's instructions block)."""
        return self.spec.instructions + "\n" if self.spec.instructions else ""

    def question(self, instance: Instance) -> str:
        """The instance's block up to the answer: input prefix, input, input suffix, output prefix."""
        return self._question(instance)

    def prompt(self, question: str, *, examples: bool = True) -> str:
        """A full prompt ending in ``question``: instructions, then the few-shot examples unless ``examples`` is False."""
        preamble = self._preamble if examples else self.instructions_block()
        return (preamble + question).rstrip(" ")

    def plan(self, instance: Instance) -> Plan:
        spec = self.spec
        self._check_options(instance)
        if self._scoring is not None:
            return self._scoring.plan(instance)
        prompt = (self._preamble + self._question(instance)).rstrip(" ")
        if spec.method == "multiple_choice_separate":
            space = "" if not prompt or prompt.endswith("\n") else " "
            return Plan(
                prompt, loglikelihood=tuple(LoglikelihoodRequest(prompt, space + text.strip()) for text in instance.choices)
            )
        return Plan(prompt, generation=GenerationRequest(prompt, spec.max_tokens, spec.stop, 0.0, spec.seed))

    def interpret(
        self,
        instance: Instance,
        plan: Plan,
        generated: GenerationResult | None,
        scored: Sequence[LoglikelihoodResult] = (),
    ) -> Completion:
        method = self.spec.method
        if self._scoring is not None:
            return self._scoring.interpret(instance, plan, scored)
        if method == "multiple_choice_separate":
            logprobs = tuple(result.logprob for result in scored)
            best = max(range(len(logprobs)), key=lambda k: (logprobs[k], -k))
            top = max(logprobs)
            normalizer = sum(math.exp(value - top) for value in logprobs)
            return Completion(
                text=instance.choices[best],
                prompt=plan.prompt,
                gold=instance.correct_references,
                choices=instance.choices,
                predicted_index=best,
                probability=math.exp(logprobs[best] - top) / normalizer,
                logprob=logprobs[best],
                choice_logprobs=logprobs,
                tokens_in=sum(result.tokens_in for result in scored),
                tokens_out=0,
                seconds=sum(result.seconds for result in scored),
                correct_indices=instance.correct_indices,
                truncated_tokens=max(result.truncated_tokens for result in scored),
                cached=all(result.cached for result in scored),
            )
        if generated is None:
            raise InternalError(f"adapter {method!r} planned a generation request for {instance.id!r} but got no generation back")
        text = generated.text.strip()
        first = generated.token_logprobs[0] if generated.token_logprobs else None
        common = {
            "prompt": plan.prompt,
            "logprob": generated.logprob,
            "tokens_in": generated.tokens_in,
            "tokens_out": generated.tokens_out,
            "seconds": generated.seconds,
            "truncated_tokens": generated.truncated_tokens,
            "cached": generated.cached,
        }
        if method == "multiple_choice_joint":
            letters = LETTERS[: len(instance.references)]
            correct = instance.correct_indices  # a property that builds its tuple on every read
            match = _LETTER.match(text)
            index = letters.index(match[1]) if match and match[1] in letters else None
            return Completion(
                text=text,
                gold=tuple(letters[k] for k in correct),
                choices=tuple(letters),
                predicted_index=index,
                probability=math.exp(first) if first is not None else None,
                correct_indices=correct,
                **common,
            )
        return Completion(
            text=text,
            gold=instance.correct_references,
            probability=math.exp(generated.logprob) if generated.token_logprobs else None,
            **common,
        )
