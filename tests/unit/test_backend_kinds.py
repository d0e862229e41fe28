"""Which registered kind of backend takes a ``--model`` spec, and what each kind reads and checks at start-up."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_holistic.errors import ModelLoadError, UserError
from pytest_holistic.models.base import ModelOptions
from pytest_holistic.models.builtin import BUILTIN_BACKENDS
from pytest_holistic.models.hf_options import HFOptions
from pytest_holistic.models.openai_options import OpenAIOptions
from pytest_holistic.models.registry import BackendKind, Backends, common_options
from pytest_holistic.options import Values

BUILTIN = Backends.of(BUILTIN_BACKENDS)


def _defaults(backends: Backends, common: ModelOptions | None = None) -> dict[str, object]:
    values = Values.defaults(option for kind in backends.kinds for option in kind.options)
    return backends.read(values, common or ModelOptions())


def _named(name: str, answer: str = "") -> BackendKind[ModelOptions]:
    return BackendKind(name, lambda spec, options: (name, spec, answer), common_options)


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        ("gpt2", "transformers"),
        ("org/model", "transformers"),
        ("smollm2-135m", "embedded"),
        ("default", "embedded"),
        ("scripted:rules.yaml", "scripted"),
        ("openai:http://127.0.0.1:8000/v1#m", "openai"),
        ("nosuch:thing", None),
    ],
)
def test_each_builtin_spec_goes_to_its_kind(spec: str, kind: str | None) -> None:
    found = BUILTIN.kind_for(spec)
    assert (found.name if found is not None else None) == kind


def test_a_folder_whose_name_looks_like_a_scheme_is_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scripted:rules").mkdir()
    found = BUILTIN.kind_for("scripted:rules")
    assert found is not None and found.name == "transformers"


def test_a_later_registration_takes_over_a_scheme_and_plain_names() -> None:
    mine = BackendKind("mine", lambda spec, options: ("mine", spec), common_options, takes=lambda spec: spec.startswith("my-"))
    backends = Backends.of((*BUILTIN_BACKENDS, _named("scripted", "plugin's"), mine))
    assert [kind.name for kind in backends.kinds] == ["transformers", "embedded", "openai", "vllm", "scripted", "mine"]
    assert backends.kind_for("scripted:x") is backends.kinds[4]
    assert backends.kind_for("my-model") is mine
    assert backends.kind_for("gpt2") is backends.kinds[0]
    assert "scripted" in backends.known_schemes() and "mine" not in backends.known_schemes()


def test_each_kind_reads_its_own_options_with_the_common_ones() -> None:
    own = _defaults(BUILTIN, ModelOptions(device="cpu", batch_size=4, revision="r1"))
    assert own["transformers"] == own["embedded"] == HFOptions(device="cpu", batch_size=4, revision="r1")
    assert own["openai"] == OpenAIOptions(revision="r1")
    assert own["scripted"] == ModelOptions(device="cpu", batch_size=4, revision="r1")


def test_the_start_up_check_is_the_kind_s_own() -> None:
    own = _defaults(BUILTIN)
    with pytest.raises(ModelLoadError, match="scripted model file absent.yaml does not exist"):
        BUILTIN.check("scripted:absent.yaml", own)
    with pytest.raises(ModelLoadError, match="give the server's base URL"):
        BUILTIN.check("openai:not-a-url", own)
    BUILTIN.check("nosuch:thing", own)  # no kind takes it: said when the model is first needed, naming the known schemes
    taken_over = Backends.of((*BUILTIN_BACKENDS, _named("scripted")))
    taken_over.check("scripted:absent.yaml", _defaults(taken_over))  # a plugin's scripted scheme: its file is its own


def test_resolve_makes_the_backend_of_the_kind_or_names_the_known_schemes() -> None:
    backends = Backends.of((_named("echo"),))
    with pytest.raises(ModelLoadError, match=r"model backend 'echo' returned tuple, which is neither a backend"):
        backends.resolve("echo:x", _defaults(backends))
    with pytest.raises(ModelLoadError, match=r"no model backend handles 'nosuch' in --model 'nosuch:x' \(known: echo\)"):
        backends.resolve("nosuch:x", _defaults(backends))
    with pytest.raises(ModelLoadError, match="no model backend takes --model 'gpt2'"):
        backends.resolve("gpt2", _defaults(backends))


def test_deterministic_scores_refuse_a_half_precision_dtype() -> None:
    from pytest_holistic.models import hf_options
    from pytest_holistic.options import Given

    def values(dtype: str, deterministic: bool) -> Values:
        parsed = Values.defaults(hf_options.OPTIONS).parsed
        given = {
            hf_options.DTYPE.flag: hf_options.DTYPE.parse(Given(dtype, "--holistic-dtype", Path())),
            hf_options.DETERMINISTIC.flag: deterministic,
        }
        return Values({**parsed, **given})

    assert hf_options.read(values("auto", True), ModelOptions()).dtype == "float32"
    assert hf_options.read(values("auto", False), ModelOptions()).dtype == "auto"
    with pytest.raises(UserError, match=r"^--holistic-deterministic needs float32 weights, but --holistic-dtype = 'bfloat16'"):
        hf_options.read(values("bfloat16", True), ModelOptions())
    with pytest.raises(UserError, match=r"^--holistic-dtype = 'fp8': use one of auto, float32"):
        values("fp8", False)
