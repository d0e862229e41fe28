"""``answer(text)``: the model's answer to any input, written the way an item's scenario writes its prompts.

Property tests (Hypothesis) need the model on inputs nobody collected: a typo'd question, a renamed
person. The probe builds the prompt with the item's adapter (its instructions, few-shot examples and
layout; the references, that is the options, stay the instance's), asks the cached model, and reads the
answer back the same way, so a shrinking replay is a cache hit and every answer is deterministic. It
remembers the perturbed inputs it answered: when the test fails, the counterexample is the one that
appears in Hypothesis' "Falsifying example" (else the last one asked: Hypothesis replays the minimal
example last), and it goes into the item's record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .errors import UserError
from .metrics.accuracy import normalize_text
from .perturbations.diff import changed_words, describe
from .plans import Completion

if TYPE_CHECKING:
    from .execution import Work
    from .models.base import Model


def prediction(completion: Completion) -> object:
    """What counts as "the answer" when comparing two: the chosen option, else the HELM-normalised text."""
    return completion.predicted_index if completion.choices else normalize_text(completion.text)


class AnswerProbe:
    """Answers arbitrary inputs for one item (``answer(text) -> Completion``), remembering the perturbed ones."""

    REMEMBERED = 4096  # perturbed inputs kept for finding the falsifying one (a bounded Hypothesis run asks fewer)

    def __init__(self, work: Work, model: Model, asked_model: Callable[[], None] = lambda: None) -> None:
        """``asked_model``: told after each answer, so the owner can note the model's counts (a worker's ledger)."""
        self.work = work
        self.model = model
        self.asked_model = asked_model
        self.asked: dict[str, Completion] = {}  # perturbed input -> answer, most recently asked last
        self._original: Completion | None = None

    def __call__(self, text: str) -> Completion:
        if not isinstance(text, str):
            raise UserError(f"answer() takes the input text as a string, got {type(text).__name__}")
        instance = replace(self.work.instance, input=text)
        completion = self.work.run.adapter.answer_one(instance, self.model.generate, self.model.loglikelihood)
        self.asked_model()
        if text == self.work.instance.input:
            self._original = completion
        else:
            self.asked.pop(text, None)
            self.asked[text] = completion
            if len(self.asked) > self.REMEMBERED:
                del self.asked[next(iter(self.asked))]
        return completion

    def counterexample(self, original_answer: Completion | None, failure: str = "") -> dict[str, Any] | None:
        """The falsifying perturbed input and both answers (for a failed property test), or None if none was asked.

        ``failure`` is the failure's text: the most recent input whose ``repr`` it shows (Hypothesis prints the
        falsifying example's arguments) is the one; without a match, the last input asked.
        """
        if not self.asked:
            return None
        recent = list(self.asked.items())[::-1]
        text, changed = next(((text, answer) for text, answer in recent if repr(text) in failure), recent[0])
        original = self._original or original_answer
        if original is None:
            original = self(self.work.instance.input)
        return {
            "original": self.work.instance.input,
            "counterexample": text,
            "change": describe(self.work.instance.input, text),
            "changed_words": changed_words(self.work.instance.input, text),
            "original_answer": original.text,
            "counterexample_answer": changed.text,
            "answer_changed": prediction(original) != prediction(changed),
        }


def counterexample_text(found: Mapping[str, Any]) -> str:
    """A failed property test's minimal counterexample, for the item's report section and the summary."""
    verdict = "changes the answer" if found.get("answer_changed") else "keeps the answer"
    return (
        f"minimal counterexample ({found['change']}) {verdict}: "
        f"{found['original_answer']!r} -> {found['counterexample_answer']!r}\n"
        f"original:       {found['original']!r}\ncounterexample: {found['counterexample']!r}"
    )
