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

Each method is a small class (:mod:`.answer_methods` for the three that read an answer, :mod:`.scoring_adapters` for
the three that only score), registered in :data:`.methods.KINDS` with its defaults; the adapter asks its method what
to write after the input, what an example's answer is, which requests to send and how to read the results. Every
method keeps the probability the model gave its answer, which calibration metrics need.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import cycle
from typing import Any

from .errors import UserError
from .methods import KINDS, kind_named
from .models.base import GenerationRequest, GenerationResult, LoglikelihoodRequest, LoglikelihoodResult
from .plans import AdapterSpec, AnswerMethod, Completion, Plan
from .scenarios.instance import Instance

NO_ANSWER = "n/a"
"""What HELM writes as the answer of an in-context example that has no correct reference."""
MULTI_LABEL_DELIMITER = ", "
GROUP_PLACEHOLDER = "{group}"
"""In ``instructions``: the instance's group with underscores as spaces (HELM's MMLU ``about {subject}``)."""
SPEC_KEYS = frozenset(AdapterSpec.__dataclass_fields__) - {"method"}
RENAMED_KEYS: Mapping[str, str] = {"instance_separator": "instance_prefix"}
"""Marker keys of earlier versions and their HELM names, so an old suite gets a one-line fix."""


def make_spec(method: str, **overrides: Any) -> AdapterSpec:
    """The spec for ``method`` with its defaults, then the marker's overrides."""
    if method not in KINDS:
        raise UserError(f"unknown adapter {method!r}; use one of {', '.join(KINDS)}")
    values = {**KINDS[method].defaults, **overrides}
    if "stop" in values:
        stop = values["stop"]
        values["stop"] = (stop,) if isinstance(stop, str) else tuple(stop or ())
    return replace(AdapterSpec(method=method), **values)


def example_pool(spec: AdapterSpec, train: Sequence[Instance]) -> tuple[int, tuple[Instance, ...]]:
    """How many in-context examples to draw and from which training instances.

    Ranking counts example *blocks* as HELM's run spec does: its ``max_train_instances=4`` means two training
    queries, each shown with both of its passages (one relevant, one not).
    """
    paired = (kind := kind_named(spec.method)) is not None and kind.paired_examples
    count = spec.max_train_instances // 2 if paired else spec.max_train_instances
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
    """Builds prompts for one scenario run and reads the model's answers back (the :class:`.plans.Layout` its method
    builds on; the method, from :data:`.methods.KINDS`, decides what is asked and how the answer reads).

    ``examples`` are the in-context examples: a sequence for every instance, or a mapping from group to the
    group's examples when the spec says ``per_group`` (a group with none gets the instructions alone).
    """

    def __init__(self, spec: AdapterSpec, examples: Sequence[Instance] | Mapping[str | None, Sequence[Instance]]) -> None:
        self.spec = spec
        self.method: AnswerMethod = KINDS[spec.method].make(self)
        groups = examples if isinstance(examples, Mapping) else {None: examples}
        self.examples_by_group: Mapping[str | None, tuple[Instance, ...]] = {key: tuple(found) for key, found in groups.items()}
        for example in self.examples:
            self.method.check(example)
        self._preambles = {key: self._build_preamble(key, found) for key, found in self.examples_by_group.items()}

    @property
    def examples(self) -> tuple[Instance, ...]:
        """Every in-context example of the run, group after group."""
        return tuple(example for found in self.examples_by_group.values() for example in found)

    # -- the blocks of a prompt ------------------------------------------------------------------

    def input_block(self, instance: Instance) -> str:
        """``input_prefix + input + input_suffix``, then what the method writes after the input (joint: every option)."""
        spec = self.spec
        return f"{spec.input_prefix}{instance.input}{spec.input_suffix}{self.method.options_block(instance)}"

    def answer(self, instance: Instance) -> str:
        """An example's answer: its first correct output in the method's answer space, all of them with ``multi_label``."""
        answers = self.method.answers(instance)
        if not answers:
            return NO_ANSWER
        return MULTI_LABEL_DELIMITER.join(answers) if self.spec.multi_label else answers[0]

    def answered_block(self, instance: Instance, answer: str) -> str:
        """The instance's block with ``answer`` written out: an in-context example, or one option to score."""
        spec = self.spec
        return f"{self.input_block(instance)}{spec.output_prefix}{answer}{spec.output_suffix}"

    def question(self, instance: Instance) -> str:
        """The evaluated instance's block: up to the output prefix, right-stripped, where the model answers."""
        return self.input_block(instance) + self.spec.output_prefix.rstrip()

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
        instructions = self.instructions(group) if self.spec.per_group else self.spec.instructions
        parts = ([instructions] if instructions else []) + [self.method.example_block(example) for example in examples]
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
        self.method.check(instance)
        return self.method.plan(instance)

    def interpret(
        self,
        instance: Instance,
        plan: Plan,
        generated: GenerationResult | None,
        scored: Sequence[LoglikelihoodResult] = (),
    ) -> Completion:
        return self.method.interpret(instance, plan, generated, scored)

    def reference_inputs(self, instance: Instance, completion: Completion) -> tuple[str, tuple[str, ...]]:
        """The answer and correct outputs the reference metrics compare (HELM's answer space; see ``AnswerMethod``)."""
        return self.method.reference_inputs(instance, completion)

    def answer_one(
        self,
        instance: Instance,
        generate: Callable[[list[GenerationRequest]], Sequence[GenerationResult]],
        loglikelihood: Callable[[list[LoglikelihoodRequest]], Sequence[LoglikelihoodResult]],
        plan: Plan | None = None,
    ) -> Completion:
        """One instance's answer outside a shard: plan it (unless ``plan`` is given), ask, read the results.

        For callers that answer one input at a time (a property test's ``answer(text)``, the determinism canary);
        a shard's items are planned, asked and read in batches by the executor.
        """
        plan = plan if plan is not None else self.plan(instance)
        generated = generate([plan.generation])[0] if plan.generation is not None else None
        scored = loglikelihood(list(plan.loglikelihood)) if plan.loglikelihood else []
        return self.interpret(instance, plan, generated, scored)
