"""Repository-wide pytest setup: pytester for the plugin's black-box tests, Hypothesis profiles for CI.

Hypothesis keeps its example database and constants cache under the pytest-holistic cache (``PYTEST_HOLISTIC_CACHE_DIR``,
else ``$XDG_CACHE_HOME/pytest-holistic``), one folder per checkout, never in the checkout itself: tests write nothing there.
"""

import hashlib
import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

from pytest_holistic.paths import cache_root

pytest_plugins = ["pytester"]

_checkout = Path(__file__).resolve().parent
set_hypothesis_home_dir(str(cache_root() / "hypothesis" / hashlib.sha256(str(_checkout).encode()).hexdigest()[:16]))

settings.register_profile("ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
