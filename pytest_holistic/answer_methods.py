"""HELM's three methods that read the model's answer: ``generation``, ``multiple_choice_joint`` and
``multiple_choice_separate`` (HELM's ``multiple_choice_separate_original``).

Each is a small class with the parts every method has (:class:`.plans.AnswerMethod`): ``check`` an instance, write the
options after its input and an example's answer, ``plan`` the requests and ``interpret`` the results, over the run's
prompt layout (:class:`.plans.Layout`). The layouts are HELM's (``helm/benchmark/adaptation/adapters/``; facts only,
the code is ours): joint multiple choice lists every option after the input as ``reference_prefix`` (its first letter
or digit counted up per option: ``A. ``, ``B. ``...) + the option as given + ``reference_suffix``, and its answer is
that label; separate multiple choice writes each option where the answer goes and scores it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .errors import InternalError, UserError
from .models.base import GenerationRequest, GenerationResult, LoglikelihoodResult
from .plans import Completion, Layout, Plan
from .scenarios.instance import Instance


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


class Method:
    """What most methods do alike: no options after the input, the correct references as answers, an example's block
    with its answer written out."""

    name = ""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout

    def check(self, instance: Instance) -> None:
        pass

    def options_block(self, instance: Instance) -> str:
        return ""

    def answers(self, instance: Instance) -> list[str]:
        return [instance.references[k].text for k in instance.correct_indices]

    def example_block(self, example: Instance) -> str:
        return self.layout.answered_block(example, self.layout.answer(example))

    def reference_inputs(self, instance: Instance, completion: Completion) -> tuple[str, tuple[str, ...]]:
        """What the reference metrics compare: the answer and the correct outputs, both in the answer's own space."""
        return completion.text, completion.gold

    def _needs_options(self, instance: Instance) -> None:
        if not instance.references:
            raise UserError(f"instance {instance.id!r} has no options; {self.name} needs the options as references")


def _generated(name: str, instance: Instance, generated: GenerationResult | None) -> GenerationResult:
    if generated is None:
        raise InternalError(f"adapter {name!r} planned a generation request for {instance.id!r} but got no generation back")
    return generated


def _common(plan: Plan, generated: GenerationResult) -> dict[str, object]:
    return {
        "prompt": plan.prompt,
        "logprob": generated.logprob,
        "tokens_in": generated.tokens_in,
        "tokens_out": generated.tokens_out,
        "seconds": generated.seconds,
        "truncated_tokens": generated.truncated_tokens,
        "cached": generated.cached,
    }


def _probability(generated: GenerationResult) -> float | None:
    """The answer's probability, the product of its tokens' (1 for an answer of no tokens, as HELM's ``max_prob``
    reads it); None where the engine gave no log-probabilities."""
    return math.exp(generated.logprob) if generated.token_logprobs or generated.logprobs_returned else None


class Generation(Method):
    """``generation``: the model writes the answer after the output prefix; the text is read stripped."""

    name = "generation"

    def plan(self, instance: Instance) -> Plan:
        spec = self.layout.spec
        prompt = self.layout.prompt(instance, self.layout.question(instance))
        return Plan(prompt, generation=GenerationRequest(prompt, spec.max_tokens, spec.stop, 0.0, spec.seed))

    def interpret(
        self, instance: Instance, plan: Plan, generated: GenerationResult | None, scored: Sequence[LoglikelihoodResult]
    ) -> Completion:
        generated = _generated(self.name, instance, generated)
        return Completion(
            text=generated.text.strip(),
            gold=instance.correct_references,
            probability=_probability(generated),
            **_common(plan, generated),  # type: ignore[arg-type]
        )


class JointChoice(Method):
    """``multiple_choice_joint``: every option labelled after the input; the model writes a label."""

    name = "multiple_choice_joint"

    def __init__(self, layout: Layout) -> None:
        super().__init__(layout)
        label_character(layout.spec.reference_prefix)  # a prefix that cannot number the options fails once, here

    def labels(self, instance: Instance) -> tuple[str, ...]:
        return option_labels(self.layout.spec.reference_prefix, len(instance.references))

    def check(self, instance: Instance) -> None:
        self._needs_options(instance)

    def options_block(self, instance: Instance) -> str:
        spec = self.layout.spec
        first = label_character(spec.reference_prefix)
        return "".join(
            f"{spec.reference_prefix.replace(first, label)}{reference.text}{spec.reference_suffix}"
            for label, reference in zip(self.labels(instance), instance.references, strict=True)
        )

    def answers(self, instance: Instance) -> list[str]:
        labels = self.labels(instance)
        return [labels[k] for k in instance.correct_indices]

    def plan(self, instance: Instance) -> Plan:
        spec = self.layout.spec
        prompt = self.layout.prompt(instance, self.layout.question(instance))
        # HELM's joint requests carry no stop sequence
        return Plan(prompt, generation=GenerationRequest(prompt, spec.max_tokens, (), 0.0, spec.seed))

    def reference_inputs(self, instance: Instance, completion: Completion) -> tuple[str, tuple[str, ...]]:
        """HELM's answer space: the option the label names (its ``output_mapping``), or nothing when the answer is no
        label, against the correct options. Not the labels themselves: HELM's normalisation drops articles, so the
        label ``A`` normalises to nothing, and every answer would quasi-prefix-match it."""
        chosen = completion.predicted_index
        return (instance.references[chosen].text if chosen is not None else ""), instance.correct_references

    def interpret(
        self, instance: Instance, plan: Plan, generated: GenerationResult | None, scored: Sequence[LoglikelihoodResult]
    ) -> Completion:
        generated = _generated(self.name, instance, generated)
        text = generated.text.strip()
        labels = self.labels(instance)
        correct = instance.correct_indices  # a property that builds its tuple on every read
        # HELM maps the stripped answer through {label: option}: anything but a label is no option.
        return Completion(
            text=text,
            gold=tuple(labels[k] for k in correct),
            choices=labels,
            predicted_index=labels.index(text) if text in labels else None,
            probability=_probability(generated),
            correct_indices=correct,
            **_common(plan, generated),  # type: ignore[arg-type]
        )


class SeparateChoice(Method):
    """``multiple_choice_separate``: each option written where the answer goes and scored; the best per token wins."""

    name = "multiple_choice_separate"

    def check(self, instance: Instance) -> None:
        self._needs_options(instance)

    def plan(self, instance: Instance) -> Plan:
        requests = tuple(self.layout.scored_option(instance, reference.text) for reference in instance.references)
        return Plan(requests[0].context, loglikelihood=requests)

    def interpret(
        self, instance: Instance, plan: Plan, generated: GenerationResult | None, scored: Sequence[LoglikelihoodResult]
    ) -> Completion:
        """HELM's ``multiple_choice_separate_original``: each option's log-probability per token; the first best wins.

        The probability kept for calibration is the softmax of those per-token scores at the chosen option (HELM's
        ``max_prob``).
        """
        if len(scored) != len(instance.references):
            raise InternalError(
                f"adapter {self.name!r} planned {len(instance.references)} requests "
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
