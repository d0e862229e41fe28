"""The optional model features are protocols (``models.base``): which backends have which, and how callers ask."""

from __future__ import annotations

from pytest_holistic.models.base import (
    AnswersAlone,
    Cancellable,
    ConcurrentStreams,
    LoadsLazily,
    ModelInfo,
    ReportsCapabilities,
)
from pytest_holistic.models.cached import CachedModel
from pytest_holistic.models.hf import HFModel
from pytest_holistic.models.openai_backend import OpenAIBackend, OpenAIModel
from pytest_holistic.models.scripted import ScriptedModel

FEATURES = (AnswersAlone, Cancellable, ConcurrentStreams, LoadsLazily, ReportsCapabilities)


class _Backend:
    def __init__(self, model: ScriptedModel, *, concurrent: bool | None = None, missing: str | None = None) -> None:
        self.model = model
        if concurrent is not None:
            self.concurrent_streams = concurrent
        if missing is not None:
            self.missing_capability = lambda kind: missing if kind == "loglikelihood" else None
        self.cancelled = 0

    def identify(self) -> ModelInfo:
        return self.model.info

    def load(self) -> ScriptedModel:
        return self.model


def test_a_scripted_model_has_no_optional_feature() -> None:
    model = ScriptedModel(default=" yes")
    assert [feature.__name__ for feature in FEATURES if isinstance(model, feature)] == []


def test_the_cached_model_has_every_feature_whatever_its_backend() -> None:
    cached = CachedModel(lambda: _Backend(ScriptedModel()), None)
    assert all(isinstance(cached, feature) for feature in FEATURES)
    assert not cached.loaded and not cached.concurrent_streams and cached.missing_capability("loglikelihood") is None


def test_the_cached_model_asks_its_backend_for_the_features_the_backend_has() -> None:
    served = CachedModel(lambda: _Backend(ScriptedModel(), concurrent=True, missing="no echo"), None)
    assert served.concurrent_streams
    assert served.missing_capability("loglikelihood") == "no echo"
    assert served.missing_capability("generation") is None


def test_a_loaded_model_that_can_cancel_is_told_when_the_cached_model_is() -> None:
    class Stoppable(ScriptedModel):
        stopped = 0

        def cancel(self) -> None:
            self.stopped += 1

    inner = Stoppable()
    cached = CachedModel(lambda: _Backend(inner), None)
    assert cached.answer_alone([]) == [] and cached.loaded  # answering alone loads the model
    cached.cancel()
    assert inner.stopped == 1
    CachedModel(lambda: _Backend(ScriptedModel()), None).cancel()  # a model that cannot cancel is left alone


def test_the_served_backend_and_model_declare_theirs_and_the_local_model_none() -> None:
    assert issubclass(OpenAIBackend, Cancellable) and issubclass(OpenAIBackend, ReportsCapabilities)
    assert issubclass(OpenAIModel, Cancellable) and OpenAIModel.concurrent_streams is True
    assert OpenAIBackend.concurrent_streams is True
    assert not any(issubclass(HFModel, feature) for feature in (AnswersAlone, Cancellable, ReportsCapabilities))
    assert not hasattr(HFModel, "concurrent_streams") and not hasattr(HFModel, "loaded")
