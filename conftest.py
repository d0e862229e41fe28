"""Repository-wide pytest setup: pytester for the plugin's black-box tests, Hypothesis profiles for CI."""

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

settings.register_profile("ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
