"""The adaptation methods that only score text: calibrated multiple choice, language modeling, binary ranking.

Each is one small class with the parts every method has (:class:`.plans.AnswerMethod`: ``check`` an instance, write a
few-shot ``example_block``, ``plan`` the log-likelihood requests, ``interpret`` the results), registered with the
others in :mod:`.methods`. Sources of the layouts (facts only; the code is ours):

- ``multiple_choice_calibrated``: HELM ``multiple_choice_separate_calibrated``
  (``helm/benchmark/adaptation/adapters/multiple_choice_calibrated_adapter.py``): per option the original
  request and a calibration request built with no in-context examples and the input replaced by ``"Answer:"``;
  the score is the difference of the two log-probabilities (Brown et al. 2020, GPT-3 §2.4).
- ``language_modeling``: HELM ``language_modeling`` (``language_modeling_adapter.py``) scores every token of the
  document once; the first token is conditioned on a start token. HELM cuts the token sequence into windows
  of the model's length with one conditioning token after the first; here the document is cut at whitespace
  into pieces of ``chunk_words`` words, each scored given all the text before it, which the backend cuts from
  the left to fit its window, so no token is scored twice and each sees as much context as fits.
- ``ranking``: HELM ``ranking_binary`` (``binary_ranking_adapter.py``, run spec ``get_msmarco_spec``,
  ``ranking_metrics.py``): per passage the block ``reference_prefix + passage + reference_suffix + input_prefix +
  query + input_suffix + output_prefix`` (``Passage: ...\\nQuery: ...\\nDoes the passage answer the query?\\nAnswer:``);
  an in-context example is a training query with each of its passages answered Yes or No, in order (HELM's
  ``max_train_instances=4``: two queries, which its scenario gives one relevant and one non-relevant passage).
  HELM ranks passages answered ``Yes`` first by that answer's log-probability (highest first), then those
  answered ``No`` (lowest log-probability first), then the rest. Scored here: the log-probabilities of `` Yes`` and `` No`` and whether each is the greedy continuation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace

from .answer_methods import Method
from .errors import InternalError, UserError
from .models.base import GenerationResult, LoglikelihoodRequest, LoglikelihoodResult
from .plans import Completion, Plan
from .scenarios.instance import Instance

CALIBRATION_INPUT = "Answer:"
RELEVANT, NOT_RELEVANT = "Yes", "No"
LONGEST_PIECE = 200
"""Characters: a run without whitespace longer than this is cut inside, so one piece always fits a window."""


def spaced(prompt: str, text: str) -> str:
    """An answer as a continuation: one space after the prompt unless it is empty or ends a line."""
    return ("" if not prompt or prompt.endswith("\n") else " ") + text


def softmax_max(scores: Sequence[float], best: int) -> float:
    top = max(scores)
    return math.exp(scores[best] - top) / sum(math.exp(value - top) for value in scores)


def _expect(instance: Instance, scored: Sequence[LoglikelihoodResult], count: int, method: str) -> None:
    if len(scored) != count:
        raise InternalError(f"adapter {method!r} planned {count} requests for {instance.id!r} but got {len(scored)} results")


def _totals(scored: Sequence[LoglikelihoodResult]) -> dict[str, object]:
    return {
        "tokens_in": sum(result.tokens_in for result in scored),
        "seconds": sum(result.seconds for result in scored),
        "truncated_tokens": max((result.truncated_tokens for result in scored), default=0),
        "cached": all(result.cached for result in scored),
    }


class Calibrated(Method):
    """``multiple_choice_calibrated``: each option's log-probability minus its log-probability after ``Answer:`` alone."""

    name = "multiple_choice_calibrated"

    def check(self, instance: Instance) -> None:
        if not instance.references:
            raise UserError(f"instance {instance.id!r} has no options; multiple_choice_calibrated needs references to score")

    def plan(self, instance: Instance) -> Plan:
        """Per option the original request, then HELM's calibration request: instructions, no examples, input ``Answer:``."""
        layout = self.layout
        calibration = replace(instance, input=CALIBRATION_INPUT)
        requests: list[LoglikelihoodRequest] = []
        for text in instance.choices:
            requests.append(layout.scored_option(instance, text))
            requests.append(layout.scored_option(calibration, text, examples=False))
        return Plan(requests[0].context, loglikelihood=tuple(requests))

    def interpret(
        self, instance: Instance, plan: Plan, generated: GenerationResult | None, scored: Sequence[LoglikelihoodResult]
    ) -> Completion:
        _expect(instance, scored, 2 * len(instance.references), "multiple_choice_calibrated")
        original = tuple(result.logprob for result in scored[0::2])
        scores = tuple(value - result.logprob for value, result in zip(original, scored[1::2], strict=True))
        ranking = tuple(sorted(range(len(scores)), key=lambda k: (-scores[k], k)))
        best = ranking[0]  # the first argmax, as HELM
        return Completion(
            text=instance.choices[best],
            prompt=plan.prompt,
            gold=instance.correct_references,
            choices=instance.choices,
            predicted_index=best,
            probability=softmax_max(scores, best),
            logprob=original[best],
            choice_logprobs=original,
            choice_scores=scores,
            ranking=ranking,
            correct_indices=instance.correct_indices,
            **_totals(scored),  # type: ignore[arg-type]
        )


def document_pieces(text: str, words: int) -> tuple[int, ...]:
    """Where ``text`` is cut: before the whitespace character that precedes every ``words``-th word.

    The space stays with the word after it, where byte-level BPE tokenizers put it, so scoring the pieces one
    after the other tokenizes almost exactly as the whole text would. A run of more than ``LONGEST_PIECE``
    characters without whitespace is also cut inside, every ``LONGEST_PIECE`` characters.
    """
    cuts: list[int] = []
    for number, word in enumerate(re.finditer(r"\S+", text)):
        if number and number % words == 0 and word.start() > 0:
            cuts.append(word.start() - 1)
        cuts.extend(range(word.start() + LONGEST_PIECE, word.end(), LONGEST_PIECE))
    return tuple(sorted(set(cuts)))


class LanguageModeling(Method):
    """``language_modeling``: the input is a document; its log-probability is summed over pieces that fit a window."""

    name = "language_modeling"

    def check(self, instance: Instance) -> None:
        if not instance.input.strip():
            raise UserError(f"instance {instance.id!r} has an empty document; language_modeling scores the input text")

    def example_block(self, example: Instance) -> str:
        return ""

    def plan(self, instance: Instance) -> Plan:
        text = instance.input
        bounds = (0, *document_pieces(text, self.layout.spec.chunk_words), len(text))
        # Every piece is scored after all the text before it, from the document's start token, as HELM's one window
        # scores the whole document after it.
        requests = tuple(
            LoglikelihoodRequest(text[:start], text[start:end], text_start=True)
            for start, end in zip(bounds, bounds[1:])
            if end > start
        )
        return Plan(text, loglikelihood=requests)

    def interpret(
        self, instance: Instance, plan: Plan, generated: GenerationResult | None, scored: Sequence[LoglikelihoodResult]
    ) -> Completion:
        _expect(instance, scored, len(plan.loglikelihood), "language_modeling")
        return Completion(
            text="",
            prompt=plan.prompt,
            gold=(),
            logprob=math.fsum(result.logprob for result in scored),
            num_bytes=len(instance.input.encode("utf-8")),
            scored_tokens=sum(result.tokens_scored for result in scored),
            **_totals(scored),  # type: ignore[arg-type]
        )


class Ranking(Method):
    """``ranking``: one Yes/No question per (query, passage); passages ordered by HELM's binary-ranking key."""

    name = "ranking"

    def check(self, instance: Instance) -> None:
        if not instance.references:
            raise UserError(f"instance {instance.id!r} has no passages; ranking needs the candidate passages as references")

    def block(self, instance: Instance, passage: str, label: str | None = None) -> str:
        """HELM's binary-ranking block: the passage, the query, the question, and ``label`` or the open answer."""
        spec = self.layout.spec
        head = f"{spec.reference_prefix}{passage}{spec.reference_suffix}{spec.input_prefix}{instance.input}{spec.input_suffix}"
        if label is None:
            return head + spec.output_prefix.rstrip()
        return f"{head}{spec.output_prefix}{label}{spec.output_suffix}"

    def example_block(self, example: Instance) -> str:
        """A training query with every one of its passages, in order, answered Yes or No (HELM shows them all)."""
        return self.layout.spec.instance_prefix.join(
            self.block(example, reference.text, RELEVANT if reference.correct else NOT_RELEVANT)
            for reference in example.references
        )

    def plan(self, instance: Instance) -> Plan:
        prompts = [self.layout.prompt(instance, self.block(instance, passage)) for passage in instance.choices]
        requests: list[LoglikelihoodRequest] = []
        for prompt in prompts:
            requests.append(LoglikelihoodRequest(prompt, spaced(prompt, RELEVANT)))
            requests.append(LoglikelihoodRequest(prompt, spaced(prompt, NOT_RELEVANT)))
        return Plan(prompts[0], loglikelihood=tuple(requests))

    def interpret(
        self, instance: Instance, plan: Plan, generated: GenerationResult | None, scored: Sequence[LoglikelihoodResult]
    ) -> Completion:
        _expect(instance, scored, 2 * len(instance.references), "ranking")
        yes, no = scored[0::2], scored[1::2]
        keys = [ranking_key(y.logprob, n.logprob, y.is_greedy, n.is_greedy) for y, n in zip(yes, no, strict=True)]
        ranking = tuple(sorted(range(len(keys)), key=lambda k: (-keys[k][0], -keys[k][1], k)))
        top = ranking[0]
        return Completion(
            text=instance.choices[top],
            prompt=plan.prompt,
            gold=instance.correct_references,
            choices=instance.choices,
            predicted_index=top,
            probability=1.0 / (1.0 + math.exp(no[top].logprob - yes[top].logprob)),
            logprob=yes[top].logprob,
            choice_logprobs=tuple(result.logprob for result in yes),
            choice_scores=tuple(value for _, value in keys),
            ranking=ranking,
            correct_indices=instance.correct_indices,
            **_totals(scored),  # type: ignore[arg-type]
        )


def ranking_key(yes: float, no: float, yes_greedy: bool, no_greedy: bool) -> tuple[int, float]:
    """HELM's order for one passage: (2, log p(Yes)) when the model answers Yes, (1, -log p(No)) for No, else (0, -log p(No)).

    HELM reads the generated answer and its log-probability; a passage answered neither way ranks last by the
    negated log-probability of what was generated, for which ``No``'s is the nearest number a scoring model gives.
    """
    if yes_greedy:
        return 2, yes
    return (1 if no_greedy else 0), -no
