"""Repository-wide pytest setup: pytester for the plugin's black-box tests, Hypothesis profiles for CI.

Hypothesis keeps its example database and constants cache under the user cache (``PYTEST_HOLISTIC_CACHE_DIR`` or
``~/.cache/pytest-holistic``), one folder per checkout, never in the checkout itself: tests write nothing there.
"""

import hashlib
import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

pytest_plugins = ["pytester"]

_checkout = Path(__file__).resolve().parent
_cache = Path(os.environ.get("PYTEST_HOLISTIC_CACHE_DIR") or Path.home() / ".cache" / "pytest-holistic")
set_hypothesis_home_dir(str(_cache / "hypothesis" / hashlib.sha256(str(_checkout).encode()).hexdigest()[:16]))

settings.register_profile("ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
