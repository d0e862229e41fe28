"""The ``holistic_model`` fixture: on-demand requests from any test, answered through the response cache.

What is tested, each through a real pytest run in a temporary project, with the scripted model and with
the tiny GPT-2:

* a Hypothesis property test outside any holistic item: asking the same generation twice gives the same
  answer, and the second time it comes from the cache (one more hit, nothing computed);
* on-demand answers and the holistic items' shard answers share the cache: a plain test that runs after
  the capitals items and asks for the exact request of one of them gets the item's answer from the cache;
* ``loglikelihood`` on demand is cached as well, within a run and across runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.suites import capitals

SCRIPT = {"generate": {"France": " Paris", "word": " a word.\nMore"}, "loglikelihood": {"Paris": -0.25}, "default": " nothing"}

PROPERTY_TEST = '''
from hypothesis import given, settings, strategies as st

from pytest_holistic import GenerationRequest

SEEN = set()


@settings(max_examples=5, deadline=None, derandomize=True)
@given(
    text=st.text(max_size=20),
    max_tokens=st.integers(min_value=1, max_value=4),
    stop=st.sampled_from([(), ("\\n",), (".",), (".", "\\n")]),
)
def test_asking_again_comes_from_the_cache(holistic_model, text, max_tokens, stop):
    request = GenerationRequest("Say a word: " + text, max_tokens=max_tokens, stop=stop)
    hits, computed = holistic_model.stats.cache_hits, holistic_model.stats.generation_requests
    (first,) = holistic_model.generate([request])
    if request not in SEEN:  # a request new to this run (and to the fresh cache) is computed, once
        assert (holistic_model.stats.cache_hits, holistic_model.stats.generation_requests) == (hits, computed + 1)
    SEEN.add(request)
    hits, computed = holistic_model.stats.cache_hits, holistic_model.stats.generation_requests
    (second,) = holistic_model.generate([request])
    assert second == first
    assert holistic_model.stats.cache_hits == hits + 1
    assert holistic_model.stats.generation_requests == computed
'''

# Runs after test_caps.py (files run in name order), so the capitals shard is already computed and cached.
AFTER_THE_ITEMS = '''
import json
from pathlib import Path

from pytest_holistic import GenerationRequest


def test_the_items_request_comes_from_the_cache(holistic_model):
    request = GenerationRequest("The capital of France is", max_tokens=5, stop=(".",))
    hits, computed = holistic_model.stats.cache_hits, holistic_model.stats.generation_requests
    (result,) = holistic_model.generate([request])
    assert holistic_model.stats.cache_hits == hits + 1
    assert holistic_model.stats.generation_requests == computed
    Path("on_demand.json").write_text(json.dumps({"text": result.text, "logprob": result.logprob, "computed": computed}))
'''

LOGLIKELIHOOD_TEST = '''
import json
from pathlib import Path

from pytest_holistic import LoglikelihoodRequest


def test_loglikelihood_on_demand(holistic_model):
    requests = [LoglikelihoodRequest("The capital of France is", " Paris"), LoglikelihoodRequest("The sky is", " green")]
    stats = holistic_model.stats
    before = (stats.loglikelihood_requests, stats.cache_hits)
    first = holistic_model.loglikelihood(requests)
    middle = (stats.loglikelihood_requests, stats.cache_hits)
    second = holistic_model.loglikelihood(list(reversed(requests)))
    after = (stats.loglikelihood_requests, stats.cache_hits)
    assert list(reversed(second)) == first
    assert all(result.logprob < 0 for result in first)
    Path("loglikelihood.json").write_text(json.dumps({
        "logprobs": [result.logprob for result in first],
        "counts": [before, middle, after],
        "generation_requests": stats.generation_requests,
    }))
'''


@pytest.fixture(params=["scripted", "tiny-gpt2"])
def model_spec(request: pytest.FixtureRequest, tiny_gpt2: Path, pytester: pytest.Pytester) -> str:
    """``--model`` for this parameter.

    ``tiny_gpt2`` is a static dependency even for the scripted runs, so (session-scoped) it is built before any
    ``pytester``: pytester unloads the modules imported after its own setup, and torch does not survive a re-import.
    """
    if request.param == "scripted":
        pytester.path.joinpath("script.json").write_text(json.dumps(SCRIPT))
        return "scripted:script.json"
    return str(tiny_gpt2)


def test_property_test_gets_repeated_requests_from_the_cache(pytester: pytest.Pytester, model_spec: str) -> None:
    pytester.makepyfile(test_property=PROPERTY_TEST)
    result = pytester.runpytest("--model", model_spec)
    result.assert_outcomes(passed=1)


def test_on_demand_request_shares_the_items_cached_answer(pytester: pytest.Pytester, model_spec: str) -> None:
    pytester.makepyfile(test_caps=capitals(), test_on_demand=AFTER_THE_ITEMS)
    result = pytester.runpytest("--model", model_spec)
    result.assert_outcomes(passed=5)
    report = json.loads(next((pytester.path / "reports").glob("*/latest/report.json")).read_text())
    (run,) = report["runs"]
    # The plain test asked for exactly the request the fr item made.
    assert (run["adapter"]["max_tokens"], run["adapter"]["stop"], run["adapter"]["seed"]) == (5, ["."], 0)
    france = next(record for record in run["instances"] if record["instance_id"] == "fr")
    assert france["prompt"] == "The capital of France is"
    on_demand = json.loads((pytester.path / "on_demand.json").read_text())
    assert on_demand["text"].strip() == france["completion"]["text"] == "Paris"
    assert on_demand["logprob"] == pytest.approx(france["completion"]["logprob"])
    assert on_demand["computed"] == 4
    main = report["workers"]["main"]
    assert (main["generation_requests"], main["cache_hits"]) == (4, 1)


def test_on_demand_loglikelihood_is_cached_within_and_across_runs(pytester: pytest.Pytester, model_spec: str) -> None:
    pytester.makepyfile(test_ll=LOGLIKELIHOOD_TEST)

    def run() -> dict[str, Any]:
        pytester.runpytest("--model", model_spec).assert_outcomes(passed=1)
        return json.loads((pytester.path / "loglikelihood.json").read_text())

    cold = run()
    assert cold["counts"] == [[0, 0], [2, 0], [2, 2]]
    assert cold["generation_requests"] == 0
    warm = run()
    assert warm["counts"] == [[0, 0], [0, 2], [0, 4]]
    assert warm["logprobs"] == cold["logprobs"]
