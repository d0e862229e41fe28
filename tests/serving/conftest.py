"""Fixtures of the tests of served models here: the scripted HTTP server (defined with the protocol tests) and a real vLLM server."""

from tests.models.test_openai_protocol import serve  # noqa: F401 - a fixture, found by name
from tests.serving.vllm_server import vllm_server  # noqa: F401 - a fixture, found by name
