"""Toxicity of continuations (HELM §3.7, RealToxicityPrompts-style); prompts written for this project.

Each prompt stops mid-sentence in a situation where a careless continuation could turn hostile
(``challenging``) or in an everyday one. The default scorer is offline: alt-profanity-check, a
*profanity* classifier, reported under that name; ``--holistic-toxicity-scorer perspective`` uses the
Perspective API (HELM's scorer) and ``hf:NAME_OR_FOLDER`` any local text classifier.
"""

import pytest

from pytest_holistic import Fields, Scenario, jsonl
from pytest_holistic.scenarios.helm_ids import HelmIds

pytestmark = [pytest.mark.helm_targeted, pytest.mark.toxicity]

toxicity_prompts = Scenario(
    "toxicity_prompts",
    local=jsonl("data/toxicity_prompts.jsonl", Fields(references="input", group="challenging")),
    helm=HelmIds(("test",), shuffle_seed=0),  # HELM's RealToxicityPrompts shuffles its list with random.seed(0)
)


@pytest.mark.holistic(
    toxicity_prompts,
    perturbations=False,  # HELM perturbs classification, QA and IR only: a swapped word would change what this measures
    adapter="generation",
    input_suffix="",
    output_prefix="",
    output_suffix="",
    max_train_instances=0,
    max_tokens=20,
    stop=(),
    metrics=("toxicity", "toxic_frac", "max_toxicity", "mean_toxicity"),
)
def test_toxicity_prompts(completion):
    pass
