"""Regenerate ``golden/confseq_betting.json``: the reference code's betting confidence sequences on seeded inputs.

The reference for ``pytest_holistic/metrics/confidence_sequence.py`` is confseq 0.0.11, the code of Waudby-Smith &
Ramdas's paper. This script runs ONLY in a side environment that holds confseq's Python dependencies; it imports
no project code, and the project never imports confseq. CI only compares against the committed JSON
(``test_confidence_sequence_golden.py``). From the repository root::

    python3 -m venv /tmp/venv-confseq
    /tmp/venv-confseq/bin/pip install numpy==1.26.4 scipy==1.17.1 matplotlib==3.11.2 multiprocess==0.70.19
    /tmp/venv-confseq/bin/pip download --no-deps --no-binary :all: confseq==0.0.11 -d /tmp/confseq_dl
    tar -xzf /tmp/confseq_dl/confseq-0.0.11.tar.gz -C /tmp
    /tmp/venv-confseq/bin/python tests/conformance/generate_confseq_goldens.py --confseq-src /tmp/confseq-0.0.11 \
        --sdist /tmp/confseq_dl/confseq-0.0.11.tar.gz

confseq is read from its source distribution rather than installed because its wheel builds a C++ extension
(uniform boundaries, needing Boost) that ``confseq.betting`` does not use; numpy stays below 2 because
``confseq.misc`` annotates with ``np.float_``. Every case's inputs are drawn here from a seeded generator and
written into the golden next to the reference's outputs, so the test replays exactly these values; an unchanged
script and environment regenerate a byte-identical file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TARGET = HERE / "golden" / "confseq_betting.json"
SCHEMA = 1
LENGTH = 300


def cases(np: Any) -> list[dict[str, Any]]:
    """The seeded inputs: Bernoulli at three means, two Beta scores, a paired difference and a finite population."""
    made = []
    for seed, p in ((101, 0.1), (102, 0.5), (103, 0.9)):
        x = (np.random.default_rng(seed).random(LENGTH) < p).astype(float)
        made.append({"name": f"bernoulli_{p}", "values": x, "low": 0.0, "high": 1.0, "population": None})
    for seed, a, b in ((201, 2.0, 5.0), (202, 6.0, 1.5)):
        x = np.random.default_rng(seed).beta(a, b, LENGTH)
        made.append({"name": f"beta_{a:g}_{b:g}", "values": x, "low": 0.0, "high": 1.0, "population": None})
    rng = np.random.default_rng(301)
    difference = (rng.random(LENGTH) < 0.7).astype(float) - (rng.random(LENGTH) < 0.6).astype(float)  # in [-1, 1]
    made.append({"name": "paired_difference", "values": difference, "low": -1.0, "high": 1.0, "population": None})
    finite = np.random.default_rng(401).permutation(np.random.default_rng(402).beta(3.0, 3.0, LENGTH))
    made.append({"name": "without_replacement", "values": finite, "low": 0.0, "high": 1.0, "population": LENGTH})
    return made


def run(confseq_src: Path) -> dict[str, Any]:
    sys.path.insert(0, str(confseq_src / "src"))
    import numpy as np
    from confseq.betting import betting_cs

    out = []
    for case in cases(np):
        values = case["values"]
        scaled = (values - case["low"]) / (case["high"] - case["low"])
        result: dict[str, Any] = {key: case[key] for key in ("name", "low", "high", "population")}
        result["values"] = values.tolist()
        for key, intersect in (("latest", False), ("running", True)):
            lower, upper = betting_cs(scaled, alpha=0.05, breaks=1000, N=case["population"], running_intersection=intersect)
            result[key] = {"lower": lower.tolist(), "upper": upper.tolist()}
        out.append(result)
    return {"cases": out}


def provenance(confseq_src: Path, sdist: Path | None) -> dict[str, str]:
    import numpy as np

    info = (confseq_src / "PKG-INFO").read_text(encoding="utf-8")
    version = next(line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("Version:"))
    produced = {"confseq": version, "numpy": np.__version__, "python": ".".join(map(str, sys.version_info[:3]))}
    if sdist is not None:
        produced["confseq_sdist_sha256"] = hashlib.sha256(sdist.read_bytes()).hexdigest()
    return produced


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--confseq-src", type=Path, required=True, help="the unpacked confseq-0.0.11 source distribution")
    parser.add_argument("--sdist", type=Path, help="the downloaded .tar.gz, to record its sha256")
    args = parser.parse_args(argv)
    golden = {
        "schema": SCHEMA,
        "section": "confseq_betting",
        "produced_by": provenance(args.confseq_src, args.sdist),
        "regenerate": "see the docstring of tests/conformance/generate_confseq_goldens.py",
        "call": "confseq.betting.betting_cs(x, alpha=0.05, breaks=1000, N=population, running_intersection=...)",
        **run(args.confseq_src),
    }
    TARGET.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(TARGET)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
