"""From an instance to model requests and back: prompts, few-shot examples, and reading the answer.

The prompt layout is HELM's (``helm/benchmark/adaptation/adapters/in_context_learning_adapter.py`` and the
method adapters beside it; facts only, the code is ours), so a HELM run spec's field values give HELM's prompt:

- a prompt is its blocks joined by ``instance_prefix``: the instructions (when there are any), one block per
  in-context example, then the evaluated instance's block; ``global_prefix`` and ``global_suffix`` wrap the whole;
- an example block is ``input_prefix + input + input_suffix + output_prefix + answer + output_suffix``;
  the evaluated block ends with ``output_prefix`` right-stripped of whitespace (the model writes the rest);
- ``multiple_choice_joint`` lists every option after the input as ``reference_prefix`` (its first letter or digit
  counted up per option: ``A. ``, ``B. ``...) + the option as given + ``reference_suffix``, and its answer is
  that label; ``multiple_choice_separate`` writes each option where the answer goes and scores it;
- in-context examples are drawn as HELM's ``sample_examples`` draws them (labels by frequency, ties shuffled,
  one example per label in turn, seeded by ``seed``, HELM's train trial index), from the training instances in
  the order the dataset gives them.

HELM's methods ``generation``, ``multiple_choice_joint`` and ``multiple_choice_separate`` live here; the three
that only score (``multiple_choice_calibrated``, ``language_modeling``, ``ranking``) each have a small class in
:mod:`.scoring_adapters`. Every method keeps the probability the model gave its answer, which calibration
metrics need.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from itertools import cycle
from typing import Any

from .errors import InternalError, UserError
from .metrics.base import Column
from .models.base import GenerationRequest, GenerationResult, LoglikelihoodRequest, LoglikelihoodResult
from .scenarios.instance import Instance

NO_ANSWER = "n/a"
"""What HELM writes as the answer of an in-context example that has no correct reference."""
MULTI_LABEL_DELIMITER = ", "
GROUP_PLACEHOLDER = "{group}"
"""In ``instructions``: the instance's group with underscores as spaces (HELM's MMLU ``about {subject}``)."""


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


_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "generation": {},
    "multiple_choice_joint": {"input_prefix": "Question: ", "max_tokens": 1},
    "multiple_choice_separate": {"output_prefix": "Answer: ", "max_tokens": 0, "stop": ()},
    "multiple_choice_calibrated": {"output_prefix": "Answer: ", "max_tokens": 0, "stop": ()},
    "language_modeling": {
        "input_suffix": "",
        "output_prefix": "",
        "output_suffix": "",
        "max_train_instances": 0,
        "max_tokens": 0,
        "stop": (),
    },
    "ranking": {
        "input_prefix": "Query: ",
        "reference_prefix": "Passage: ",
        "output_prefix": "Does the passage answer the query?\nAnswer: ",
        "max_train_instances": 4,
        "max_tokens": 0,
        "stop": (),
    },
}
METHODS = tuple(_DEFAULTS)
HELM_METHODS: Mapping[str, str] = {
    "generation": "generation",
    "multiple_choice_joint": "multiple_choice_joint",
    "multiple_choice_separate": "multiple_choice_separate_original",
    "multiple_choice_calibrated": "multiple_choice_separate_calibrated",
    "language_modeling": "language_modeling",
    "ranking": "ranking_binary",
}
"""Each method's name in HELM's ``AdapterSpec.method``."""
LOGLIKELIHOOD_METHODS = frozenset({"multiple_choice_separate", "multiple_choice_calibrated", "language_modeling", "ranking"})
"""Methods that score text by its log-probability, so a model must return prompt log-probabilities to run them."""
SPEC_KEYS = frozenset(AdapterSpec.__dataclass_fields__) - {"method"}
RENAMED_KEYS: Mapping[str, str] = {"instance_separator": "instance_prefix"}
"""Marker keys of earlier versions and their HELM names, so an old suite gets a one-line fix."""
_EVERY_METHOD = frozenset(
    {Column.TEXT, Column.REFERENCES, Column.GOLD_LABEL, Column.PREDICTED_LABEL, Column.CONFIDENCE, Column.CORRECT}
)
_OPTIONS = _EVERY_METHOD | {Column.NUM_CHOICES, Column.CLASS_ANSWER}
COLUMNS: Mapping[str, frozenset[Column]] = {
    "generation": _EVERY_METHOD | {Column.CLASS_ANSWER},
    "multiple_choice_joint": _OPTIONS,
    "multiple_choice_separate": _OPTIONS | {Column.LOGPROB_MORE, Column.LOGPROB_LESS},
    "multiple_choice_calibrated": _OPTIONS | {Column.LOGPROB_MORE, Column.LOGPROB_LESS},
    "language_modeling": frozenset({Column.DOCUMENT_LOGPROB, Column.NUM_BYTES, Column.NUM_TOKENS}),
    "ranking": _EVERY_METHOD | {Column.NUM_CHOICES, Column.RANKED_RELEVANCES, Column.RANKED_GOLD},
}
"""What each method's answers can feed to population metrics (two-option log-probabilities only from scoring; HELM's
classification view not from a ranking, whose answer is an order of passages)."""


def make_spec(method: str, **overrides: Any) -> AdapterSpec:
    """The spec for ``method`` with its defaults, then the marker's overrides."""
    if method not in _DEFAULTS:
        raise UserError(f"unknown adapter {method!r}; use one of {', '.join(METHODS)}")
    values = {**_DEFAULTS[method], **overrides}
    if "stop" in values:
        stop = values["stop"]
        values["stop"] = (stop,) if isinstance(stop, str) else tuple(stop or ())
    return replace(AdapterSpec(method=method), **values)


def label_character(reference_prefix: str) -> str:
    """The character of ``reference_prefix`` that names the first option: its first letter or digit (HELM's rule)."""
    for character in reference_prefix:
        if character.isalnum():
            return character
    raise UserError(
        f"reference_prefix {reference_prefix!r} has no letter or digit to number the options with; use e.g. 'A. ' or '(1) '"
    )


def option_labels(reference_prefix: str, count: int) -> tuple[str, ...]:
    """The labels of ``count`` options: the first one's character counted up (``A``, ``B``...; ``1``, ``2``...)."""
    first = ord(label_character(reference_prefix))
    return tuple(chr(first + index) for index in range(count))


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
    """How many in-context examples to draw and from which training instances.

    Ranking counts example *blocks* as HELM's run spec does: its ``max_train_instances=4`` means two training
    queries, each shown with both of its passages (one relevant, one not).
    """
    count = spec.max_train_instances // 2 if spec.method == "ranking" else spec.max_train_instances
    return count, tuple(train)


def select_examples(train: Sequence[Instance], count: int, seed: int, *, sample_train: bool = True) -> tuple[Instance, ...]:
    """The in-context examples, drawn as HELM's ``sample_examples`` draws them, so the same training data gives HELM's.

    ``train`` is in the dataset's order. The labels (first correct reference) are ordered by how many instances
    share them, most first, ties shuffled; one example is drawn from each label in turn until ``count``; instances
    without a correct reference fill what is left. ``seed`` seeds the draws (HELM's train trial index).
    ``sample_train=False`` takes the ``seed``-th run of ``count`` consecutive instances instead. Where HELM
    would draw forever (every labelled pool empty before ``count``) the unlabelled instances are taken instead.
    """
    wanted = min(len(train), count)
    if wanted <= 0:
        return ()
    if not sample_train:
        return tuple(train[wanted * seed : wanted * (seed + 1)])
    rng = random.Random(seed)
    unlabeled: list[Instance] = []
    pools: dict[str, list[Instance]] = defaultdict(list)
    for instance in train:
        label = next((reference.text for reference in instance.references if reference.correct), None)
        if label is None:
            unlabeled.append(instance)
        else:
            pools[label].append(instance)
    by_size: dict[int, list[str]] = defaultdict(list)
    for label in sorted(pools):
        by_size[len(pools[label])].append(label)
    order: list[str] = []
    for size in sorted(by_size, reverse=True):
        tied = by_size[size]
        rng.shuffle(tied)
        order.extend(tied)
    chosen: list[Instance] = []
    labels = cycle(order)
    left = sum(len(pool) for pool in pools.values())
    while len(chosen) < wanted and left:
        label = next(labels, None)
        if not label:  # HELM stops at an empty label (it is falsy), as at the end of no labels at all
            break
        pool = pools[label]
        if pool:
            chosen.append(pool.pop(rng.randrange(len(pool))))
            left -= 1
    chosen.extend(rng.sample(unlabeled, min(wanted - len(chosen), len(unlabeled))))
    return tuple(chosen)


def examples_by_group(spec: AdapterSpec, train: Sequence[Instance]) -> dict[str | None, tuple[Instance, ...]]:
    """The run's in-context examples: one draw over all of ``train``, or with ``per_group`` one draw per group.

    Per group, the pool is that group's training instances in their order, as when HELM runs one MMLU subject.
    """
    count, pool = example_pool(spec, train)
    if not spec.per_group:
        return {None: select_examples(pool, count, spec.seed, sample_train=spec.sample_train)}
    members: dict[str | None, list[Instance]] = defaultdict(list)
    for instance in pool:
        members[instance.group].append(instance)
    return {group: select_examples(found, count, spec.seed, sample_train=spec.sample_train) for group, found in members.items()}


class Adapter:
    """Builds prompts for one scenario run and reads the model's answers back.

    ``examples`` are the in-context examples: a sequence for every instance, or a mapping from group to the
    group's examples when the spec says ``per_group`` (a group with none gets the instructions alone).
    """

    def __init__(self, spec: AdapterSpec, examples: Sequence[Instance] | Mapping[str | None, Sequence[Instance]]) -> None:
        from .scoring_adapters import SCORING  # builds on this module's types, so imported here

        self.spec = spec
        if spec.method == "multiple_choice_joint":
            label_character(spec.reference_prefix)  # a prefix that cannot number the options fails once, here
        groups = examples if isinstance(examples, Mapping) else {None: examples}
        self.examples_by_group: Mapping[str | None, tuple[Instance, ...]] = {key: tuple(found) for key, found in groups.items()}
        self._scoring = SCORING[spec.method](self) if spec.method in SCORING else None
        for example in self.examples:
            self._check_options(example)
        self._preambles = {key: self._build_preamble(key, found) for key, found in self.examples_by_group.items()}

    @property
    def examples(self) -> tuple[Instance, ...]:
        """Every in-context example of the run, group after group."""
        return tuple(example for found in self.examples_by_group.values() for example in found)

    def _check_options(self, instance: Instance) -> None:
        """Runs for every plan: counts the references (the options) without building ``choices``, a new tuple per read."""
        if self._scoring is not None:
            self._scoring.check(instance)
            return
        method = self.spec.method
        if method in ("multiple_choice_joint", "multiple_choice_separate") and not instance.references:
            raise UserError(f"instance {instance.id!r} has no options; {method} needs the options as references")

    # -- the blocks of a prompt ------------------------------------------------------------------

    def labels(self, instance: Instance) -> tuple[str, ...]:
        """The option labels of a joint multiple-choice instance (``A``, ``B``... from ``reference_prefix``)."""
        return option_labels(self.spec.reference_prefix, len(instance.references))

    def input_block(self, instance: Instance) -> str:
        """``input_prefix + input + input_suffix``, then for joint multiple choice every labelled option."""
        spec = self.spec
        block = f"{spec.input_prefix}{instance.input}{spec.input_suffix}"
        if spec.method == "multiple_choice_joint":
            first = label_character(spec.reference_prefix)
            block += "".join(
                f"{spec.reference_prefix.replace(first, label)}{reference.text}{spec.reference_suffix}"
                for label, reference in zip(self.labels(instance), instance.references, strict=True)
            )
        return block

    def answer(self, instance: Instance) -> str:
        """An example's answer: its first correct reference (its label for joint), all of them with ``multi_label``."""
        correct = instance.correct_indices
        if not correct:
            return NO_ANSWER
        if self.spec.method == "multiple_choice_joint":
            labels = self.labels(instance)
            answers = [labels[k] for k in correct]
        else:
            answers = [instance.references[k].text for k in correct]
        return MULTI_LABEL_DELIMITER.join(answers) if self.spec.multi_label else answers[0]

    def answered_block(self, instance: Instance, answer: str) -> str:
        """The instance's block with ``answer`` written out: an in-context example, or one option to score."""
        spec = self.spec
        return f"{self.input_block(instance)}{spec.output_prefix}{answer}{spec.output_suffix}"

    def question(self, instance: Instance) -> str:
        """The evaluated instance's block: up to the output prefix, right-stripped, where the model answers."""
        return self.input_block(instance) + self.spec.output_prefix.rstrip()

    def _example_block(self, example: Instance) -> str:
        return self.answered_block(example, self.answer(example))

    def instructions(self, group: str | None) -> str:
        """The instructions of a ``per_group`` run, ``{group}`` filled with the group's name (underscores as spaces)."""
        text = self.spec.instructions
        if GROUP_PLACEHOLDER not in text:
            return text
        if group is None:
            raise UserError(
                f"the instructions mention {GROUP_PLACEHOLDER} but an instance has no group; "
                "give the scenario's Fields a group= column or drop the placeholder"
            )
        return text.replace(GROUP_PLACEHOLDER, group.replace("_", " "))

    def _build_preamble(self, group: str | None, examples: Sequence[Instance]) -> str:
        """What comes before the evaluated block: instructions and example blocks, each followed by ``instance_prefix``."""
        block = self._scoring.example_block if self._scoring is not None else self._example_block
        instructions = self.instructions(group) if self.spec.per_group else self.spec.instructions
        parts = ([instructions] if instructions else []) + [block(example) for example in examples]
        return "".join(part + self.spec.instance_prefix for part in parts)

    def _preamble(self, instance: Instance, examples: bool) -> str:
        group = instance.group if self.spec.per_group else None
        if examples and group in self._preambles:
            return self._preambles[group]
        return self._build_preamble(group, ())

    def prompt(self, instance: Instance, block: str, *, examples: bool = True) -> str:
        """A full prompt ending in ``block``: instructions and (unless ``examples`` is False) the instance's examples."""
        spec = self.spec
        return f"{spec.global_prefix}{self._preamble(instance, examples)}{block}{spec.global_suffix}"

    def scored_option(self, instance: Instance, option: str, *, examples: bool = True) -> LoglikelihoodRequest:
        """One option written where the answer goes, as a context and the continuation whose log-probability counts.

        The text is HELM's prompt for that option up to the option's end; a space ending the output prefix moves
        into the continuation (``" Positive"``), where byte-level tokenizers put it and where HELM counts its tokens.
        """
        spec = self.spec
        before = f"{spec.global_prefix}{self._preamble(instance, examples)}{self.input_block(instance)}{spec.output_prefix}"
        if before.endswith(" "):
            return LoglikelihoodRequest(before[:-1], " " + option)
        return LoglikelihoodRequest(before, option)

    # -- requests and answers --------------------------------------------------------------------

    def plan(self, instance: Instance) -> Plan:
        spec = self.spec
        self._check_options(instance)
        if self._scoring is not None:
            return self._scoring.plan(instance)
        if spec.method == "multiple_choice_separate":
            requests = tuple(self.scored_option(instance, reference.text) for reference in instance.references)
            return Plan(requests[0].context, loglikelihood=requests)
        prompt = self.prompt(instance, self.question(instance))
        stop = () if spec.method == "multiple_choice_joint" else spec.stop  # HELM's joint requests carry no stop sequence
        return Plan(prompt, generation=GenerationRequest(prompt, spec.max_tokens, stop, 0.0, spec.seed))

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
            return self._separate(instance, plan, scored)
        if generated is None:
            raise InternalError(f"adapter {method!r} planned a generation request for {instance.id!r} but got no generation back")
        text = generated.text.strip()
        common = {
            "prompt": plan.prompt,
            "logprob": generated.logprob,
            "tokens_in": generated.tokens_in,
            "tokens_out": generated.tokens_out,
            "seconds": generated.seconds,
            "truncated_tokens": generated.truncated_tokens,
            "cached": generated.cached,
        }
        probability = math.exp(generated.logprob) if generated.token_logprobs else None
        if method == "multiple_choice_joint":
            labels = self.labels(instance)
            correct = instance.correct_indices  # a property that builds its tuple on every read
            # HELM maps the stripped answer through {label: option}: anything but a label is no option.
            index = labels.index(text) if text in labels else None
            return Completion(
                text=text,
                gold=tuple(labels[k] for k in correct),
                choices=labels,
                predicted_index=index,
                probability=probability,
                correct_indices=correct,
                **common,
            )
        return Completion(text=text, gold=instance.correct_references, probability=probability, **common)

    def _separate(self, instance: Instance, plan: Plan, scored: Sequence[LoglikelihoodResult]) -> Completion:
        """HELM's ``multiple_choice_separate_original``: each option's log-probability per token; the first best wins.

        The probability kept for calibration is the softmax of those per-token scores at the chosen option (HELM's
        ``max_prob``).
        """
        if len(scored) != len(instance.references):
            raise InternalError(
                f"adapter 'multiple_choice_separate' planned {len(instance.references)} requests "
                f"for {instance.id!r} but got {len(scored)} results"
            )
        logprobs = tuple(result.logprob for result in scored)
        scores = tuple(result.logprob / max(result.tokens_scored, 1) for result in scored)
        best = max(range(len(scores)), key=lambda k: (scores[k], -k))
        top = scores[best]
        return Completion(
            text=instance.choices[best],
            prompt=plan.prompt,
            gold=instance.correct_references,
            choices=instance.choices,
            predicted_index=best,
            probability=1.0 / math.fsum(math.exp(value - top) for value in scores),
            logprob=logprobs[best],
            choice_logprobs=logprobs,
            choice_scores=scores,
            tokens_in=sum(result.tokens_in for result in scored),
            tokens_out=0,
            seconds=sum(result.seconds for result in scored),
            correct_indices=instance.correct_indices,
            truncated_tokens=max(result.truncated_tokens for result in scored),
            cached=all(result.cached for result in scored),
        )
