#!/usr/bin/env bash
# The export formats' own readers, each in a virtual environment of its own (never the project's), for
# tests/plugin/test_export.py:
#   - the EvalEval Coalition's Every Eval Ever validator, `python -m every_eval_ever validate`, from the PyPI release
#     whose schemas are those in tests/conformance/data/every_eval_ever (version 0.2.2). The release says it needs
#     Python 3.12; its validator (pydantic models and rich output) runs on 3.11, so it is installed without that check
#     and with only the two packages the validator imports;
#   - Inspect AI's log reader, `inspect_ai.log.read_eval_log`, at the version whose schema is in
#     tests/conformance/data/inspect_ai.
# Usage: bash tests/conformance/export_readers.sh FOLDER [PYTHON]
# Builds FOLDER/every-eval-ever and FOLDER/inspect (an existing one that imports is kept), then prints the lines
# `export HOLISTIC_EEE_PYTHON=...` and `export HOLISTIC_INSPECT_PYTHON=...` for those that work.
set -uo pipefail
folder=${1:?usage: export_readers.sh FOLDER [PYTHON]}
python=${2:-$(command -v python3.11 || command -v python3)}
quiet=(--quiet --disable-pip-version-check)

install_every_eval_ever() {
    "$1/bin/pip" install "${quiet[@]}" "pydantic>=2.12.5,<3" "rich>=14,<15" &&
        "$1/bin/pip" install "${quiet[@]}" --no-deps --ignore-requires-python every-eval-ever==0.2.3rc1
}

install_inspect() {
    "$1/bin/pip" install "${quiet[@]}" inspect_ai==0.3.285
}

ready() {  # name, module it must import, its installer; an existing environment that imports it is kept
    local venv="$folder/$1"
    "$venv/bin/python" -c "import $2" >/dev/null 2>&1 && return 0
    rm -rf "$venv"
    "$python" -m venv "$venv" >&2 && "$3" "$venv" >&2 && "$venv/bin/python" -c "import $2" >/dev/null 2>&1
}

if ready every-eval-ever every_eval_ever.validate install_every_eval_ever; then
    echo "export HOLISTIC_EEE_PYTHON=$folder/every-eval-ever/bin/python"
else
    echo "the Every Eval Ever validator could not be installed: its test will skip" >&2
fi
if ready inspect inspect_ai.log install_inspect; then
    echo "export HOLISTIC_INSPECT_PYTHON=$folder/inspect/bin/python"
else
    echo "Inspect AI could not be installed: its reader's test will skip" >&2
fi
