"""What the managed vLLM engine is started with, and which of the user's engine arguments enter the cache key: those
that can change an answer (dtype, length, quantisation, seed), never those that only place the work (parallelism,
memory share, port, prefix caching, a multi-node data-parallel rank), in either spelling (``--flag v``, ``--flag=v``)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pytest_holistic.models.engine import PORT
from pytest_holistic.models.vllm_backend import VllmBackend, answer_shaping
from pytest_holistic.models.vllm_options import VllmOptions


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("--dtype bfloat16 --max-model-len 8192", "--dtype bfloat16 --max-model-len 8192"),
        ("-tp 4 --dtype=half -dp=2 --gpu-memory-utilization 0.9", "--dtype=half"),
        ("--tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1", ""),
        ("--enable-prefix-caching --quantization fp8 --port 8001", "--quantization fp8"),
        ("--no-enable-prefix-caching --seed 3 --headless --data-parallel-start-rank 1", "--seed 3"),
        ("--data-parallel-hybrid-lb --kv-cache-dtype fp8 --max-num-seqs 64", "--kv-cache-dtype fp8"),
    ],
)
def test_only_answer_shaping_arguments_enter_the_key(given: str, kept: str) -> None:
    assert answer_shaping(tuple(shlex.split(given))) == tuple(shlex.split(kept))


def _command(tmp_path: Path, args: str) -> tuple[str, ...]:
    options = VllmOptions(python="/usr/bin/python3", engine_args=tuple(shlex.split(args)))
    return VllmBackend(f"vllm:{tmp_path}", options).engine_command().argv


def test_the_engine_listens_on_loopback_with_prefix_caching_and_the_users_arguments_last(tmp_path: Path) -> None:
    argv = _command(tmp_path, "--tensor-parallel-size 2 --dtype float32")
    assert argv[:3] == ("/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server")
    assert argv[argv.index("--model") + 1] == str(tmp_path.resolve())
    assert argv[argv.index("--host") + 1] == "127.0.0.1" and argv[argv.index("--port") + 1] == PORT
    assert argv.count("--enable-prefix-caching") == 1
    assert argv[-4:] == ("--tensor-parallel-size", "2", "--dtype", "float32")


@pytest.mark.parametrize("args", ["--no-enable-prefix-caching", "--enable-prefix-caching", "--port=8123"])
def test_the_users_own_choice_is_not_doubled(tmp_path: Path, args: str) -> None:
    argv = _command(tmp_path, args)
    caching = [arg for arg in argv if arg.endswith("enable-prefix-caching")]
    assert caching == ([args] if "caching" in args else ["--enable-prefix-caching"])
    ports = [arg for arg in argv if arg.startswith("--port")]
    assert ports == (["--port=8123"] if "port" in args else ["--port"])


def test_the_start_token_text_is_sent_where_the_tokenizer_adds_none(tiny_gpt2: Path) -> None:
    """The tiny GPT-2's tokenizer adds no start token; its start token is the end-of-text token, which the text
    encodes back to (so the engine's tokenizer reads the same token)."""
    from transformers import AutoTokenizer

    from pytest_holistic.models.vllm_backend import start_text

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_gpt2))
    assert tokenizer("x")["input_ids"][0] != tokenizer.bos_token_id  # the premise: none added
    text = start_text(tiny_gpt2)
    assert text == "<|endoftext|>" and tokenizer(text, add_special_tokens=False)["input_ids"] == [tokenizer.bos_token_id]


def test_no_start_token_text_without_a_local_tokenizer(tmp_path: Path) -> None:
    from pytest_holistic.models.vllm_backend import start_text

    assert start_text(tmp_path / "missing") == "" and start_text("no-such-org/no-such-model") == ""
