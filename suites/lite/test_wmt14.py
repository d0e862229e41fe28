"""WMT 2014 translation into English from Czech, German, French, Hindi and Russian (HELM Lite; main metric BLEU-4).

HELM Lite's run entries ``wmt_14:language_pair=<xx>-en`` (run_specs/lite_run_specs.py ``get_wmt_14_spec``,
adaptation/common_adapter_specs.py ``get_machine_translation_adapter_spec``, scenarios/wmt_14_scenario.py): the
instructions "Translate the following sentences from <language> to English.", ``<Language>: <sentence>`` then
``English: ``, one in-context example, at most 100 tokens, stop at a blank line; metrics
``get_open_ended_generation_metric_specs`` (exact match, quasi exact match, F1, ROUGE-L, BLEU-1, BLEU-4, HELM's
sentence BLEU). One run per language pair: ``pytest suites/lite/test_wmt14.py -k de_en``. HELM shuffles each pair's
training split (seed 42), keeps 20,000 pairs and one pair per English sentence, and evaluates the test split.

The hub source is ``wmt/wmt14`` (configs ``cs-en`` ... ``ru-en``; no revision pinned: HELM pins one of the former
``wmt14`` loading script, which ``datasets`` no longer runs); only the 20,000 sampled training pairs are read, but the
split is downloaded whole, as HELM does. HELM's size: 1,000 of each test split's about 3,000 sentences (HELM Lite's
``--max-eval-instances 1000``); the offline edition (data/wmt14_<xx>_en.jsonl, news sentences written for this
project in the hub's row layout): 4 train pairs (3 distinct English sentences), 1 validation and 4 test pairs each.
"""

from collections.abc import Callable
from functools import partial

import pytest

from pytest_holistic import Fields, Scenario, hf, jsonl, metrics
from pytest_holistic.scenarios.helm_ids import HelmIds
from pytest_holistic.scenarios.helm_rows_lite import wmt14_order, wmt14_row, wmt14_train_sample

pytestmark = [pytest.mark.helm_lite, pytest.mark.machine_translation]

LANGUAGES = {"cs": "Czech", "de": "German", "fr": "French", "hi": "Hindi", "ru": "Russian"}
"""HELM Lite's five source languages, with the names its prompts use."""


def wmt14_scenario(language: str) -> Scenario:
    fields = Fields(input="source", prepare=partial(wmt14_row, language, "en"))
    hub = hf(
        "wmt/wmt14",
        f"{language}-en",
        splits={"train": "train", "validation": "valid", "test": "test"},
        fields=fields,
        sample={"train": wmt14_train_sample},
    )
    return Scenario(
        f"wmt_14_{language}_en",
        local=wmt14_order(jsonl(f"data/wmt14_{language}_en.jsonl", fields), sampled=False),
        hub=wmt14_order(hub, sampled=True),
        split="test",
        train_split="train",
        helm=HelmIds(("train", "valid", "test")),  # wmt14_order gives HELM's order: sampled train, validation, test
        helm_group="wmt_14",  # HELM Lite's one WMT 2014 column: the mean over the five pairs
    )


def wmt14_test(language: str) -> Callable[..., None]:
    """The test function of one language pair, marked with HELM's machine translation adaptation."""
    name = LANGUAGES[language]

    @pytest.mark.holistic(
        wmt14_scenario(language),
        adapter="generation",
        instructions=f"Translate the following sentences from {name} to English.",
        input_prefix=f"{name}: ",
        input_suffix="\n",
        output_prefix="English: ",
        output_suffix="\n",
        max_train_instances=1,
        max_tokens=100,
        stop=("\n\n",),
        metrics=("bleu_4", *metrics.HELM_OPEN_ENDED),
    )
    def test(completion, record):
        record(answered=bool(completion.text.strip()))

    test.__name__ = test.__qualname__ = f"test_wmt14_{language}_en"
    return test


for _language in LANGUAGES:
    globals()[f"test_wmt14_{_language}_en"] = wmt14_test(_language)
