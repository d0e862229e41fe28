"""A memorisation probe (targeted evaluation: copyright) over passages the project ships.

Adapter as HELM's ``copyright`` run spec: a bare completion prompt (the text's opening, no instructions, no
in-context examples), up to 1024 generated tokens with no stop sequence. HELM samples at temperature 0.2; decoding
here is greedy (reproducible, cacheable). Each metric is divided by the prefix's Treebank token count, as HELM's run
reports it. Metrics:
``longest_common_prefix_length`` (main), ``edit_distance`` (lower is closer) and ``edit_similarity``. HELM's
copyright data are 1000s of book and code prefixes; here 8 of the 10 shipped passages (a seeded sample).
"""

import pytest

from pytest_holistic import metrics
from pytest_holistic.scenarios.synthetic import memorisation

pytestmark = pytest.mark.helm_targeted


@pytest.mark.holistic(
    memorisation(),
    adapter="generation",
    perturbations=False,  # the probe measures verbatim recall of the exact text
    input_prefix="",
    input_suffix="",
    output_prefix="",
    output_suffix="",
    max_train_instances=0,
    max_instances=8,  # 1024 tokens each: one batch of the CPU backend (8 prompts) keeps the offline run to minutes
    max_tokens=1024,
    stop=(),
    metrics=("longest_common_prefix_length", "edit_distance", "edit_similarity"),
)
def test_memorisation(instance, completion, record):
    # HELM's copyright run divides each number by the prefix's token count (normalize_by_prefix_length=True), so a
    # longer prefix does not make recall look larger: the run reports HELM's normalised numbers under HELM's names.
    for metric in (metrics.longest_common_prefix_length, metrics.edit_distance, metrics.edit_similarity):
        record(metric(completion.text, instance.references, prefix=instance.input))
