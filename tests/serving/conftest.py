"""The scripted HTTP server's fixture for the tests of served models here (defined with the protocol tests)."""

from tests.models.test_openai_protocol import serve  # noqa: F401 - a fixture, found by name
