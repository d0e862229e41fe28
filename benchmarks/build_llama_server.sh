#!/usr/bin/env bash
# Build llama.cpp's C++ server (llama-server) from the source vendored in the llama-cpp-python sdist on PyPI,
# for bench_concurrency.py: unlike llama-cpp-python's Python server, it decodes several requests at once
# (--parallel slots, continuous batching). Also llama-quantize, which writes a 16-bit copy of the embedded
# GGUF for the benchmark. About 10 minutes on 2 cores; the result is cached.
# usage: bash benchmarks/build_llama_server.sh   -> prints the binary's path
set -euo pipefail
version=0.3.36
prefix="${PYTEST_HOLISTIC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pytest-holistic}/llama-server-$version"
if [ -x "$prefix/bin/llama-server" ]; then echo "$prefix/bin/llama-server"; exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$version" -d "$work" >&2
tar -xzf "$work"/llama_cpp_python-$version.tar.gz -C "$work"
source="$work/llama_cpp_python-$version/vendor/llama.cpp"
cmake -S "$source" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix" >&2
cmake --build "$work/build" --target llama-server llama-quantize -j"$(nproc)" >&2
mkdir -p "$prefix/bin"
cp -a "$work/build/bin/llama-server" "$work/build/bin/llama-quantize" "$prefix/bin/"
echo "$prefix/bin/llama-server"
