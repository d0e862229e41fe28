"""A stand-in for the ``vllm`` package, for testing ``--model vllm:MODEL`` where vLLM is not installed."""

__version__ = "0.0.0+stand-in"
