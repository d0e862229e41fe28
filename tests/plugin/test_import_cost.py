"""pytest loads the plugin on every run, so importing it must not import the heavy libraries."""

import subprocess
import sys


def test_plugin_import_is_light() -> None:
    code = (
        "import sys, pytest_holistic.plugin, pytest_holistic;"
        "heavy = [m for m in ('torch', 'transformers', 'datasets') if m in sys.modules];"
        "print(heavy); sys.exit(1 if heavy else 0)"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_collection_does_not_import_heavy_libraries(pytester) -> None:
    pytester.makeconftest(
        """
        import sys

        def pytest_collection_finish(session):
            heavy = [m for m in ("torch", "transformers", "datasets") if m in sys.modules]
            print("HEAVY-AFTER-COLLECTION", heavy)
        """
    )
    pytester.makepyfile(
        test_check="""
        import pytest
        from pytest_holistic import Instance, scenario

        @scenario
        def s():
            yield Instance(id="a", input="x", references=("y",))

        @pytest.mark.holistic(s)
        def test_it(completion):
            pass
        """
    )
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-s")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["HEAVY-AFTER-COLLECTION []"])
