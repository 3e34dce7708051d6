"""The Docker files agree with the code: server address, start order, pins, no secrets in the image."""

from __future__ import annotations

import re
from pathlib import Path

import chromadb
import pytest
import torch
import yaml

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n\s*", " ", (REPO / "Dockerfile").read_text(encoding="utf-8"))
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            op, _, args = line.strip().partition(" ")
            rows.append((op.upper(), args.strip()))
    return rows


def test_chroma_server_matches_the_client_and_keeps_its_data(compose):
    chroma = compose["services"]["chroma"]
    tag = chroma["image"].split(":")[1]
    assert tag.split(".")[:2] == chromadb.__version__.split(".")[:2]
    path = chroma["command"][chroma["command"].index("--path") + 1]
    assert any(v.split(":")[1] == path for v in chroma["volumes"])
    assert chroma["volumes"][0].split(":")[0] in compose["volumes"]
    assert "/api/v2/heartbeat" in " ".join(chroma["healthcheck"]["test"])


def test_ingest_runs_once_before_the_bot(compose):
    ingest, bot = compose["services"]["ingest"], compose["services"]["bot"]
    assert ingest["command"] == ["paperbot", "ingest"]
    assert ingest["restart"] == "no"
    assert ingest["depends_on"]["chroma"]["condition"] == "service_healthy"
    assert bot["command"] == ["paperbot", "run"]
    assert bot["depends_on"]["ingest"]["condition"] == "service_completed_successfully"


@pytest.mark.parametrize("service", ["ingest", "bot"])
def test_paperbot_services_use_the_server_and_take_secrets_from_env_file(compose, service):
    svc = compose["services"][service]
    assert svc["environment"]["CHROMA_HOST"] == "chroma"
    assert str(svc["environment"]["CHROMA_PORT"]) == "8000"
    assert svc["env_file"] == [".env"]
    assert not {k for k in svc["environment"] if re.search(r"TOKEN|KEY|SECRET|PASSWORD", k)}


def test_image_is_two_stage_non_root_offline_and_cpu_only(dockerfile):
    ops = [op for op, _ in dockerfile]
    assert ops.count("FROM") == 2
    users = [args for op, args in dockerfile if op == "USER"]
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    assert "HEALTHCHECK" in ops
    assert dict(dockerfile)["CMD"] == '["paperbot", "run"]'
    env = " ".join(args for op, args in dockerfile if op == "ENV")
    assert "HF_HUB_OFFLINE=1" in env
    runs = " ".join(args for op, args in dockerfile if op in {"RUN", "ARG"})
    assert "download.pytorch.org/whl/cpu" in runs
    assert f"TORCH_VERSION={torch.__version__.split('+')[0]}" in runs


def test_image_copies_only_what_exists_and_never_the_env_file(dockerfile):
    for op, args in dockerfile:
        if op == "COPY" and "--from=" not in args:
            sources = [a for a in args.split() if not a.startswith("--")][:-1]
            for src in sources:
                assert (REPO / src).exists(), f"COPY {src}: no such path"
    ignored = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert {".env", ".env.*", ".git", ".venv"} <= set(ignored)


@pytest.mark.parametrize("service", ["ingest", "bot"])
def test_compose_keeps_the_image_folders_and_runs_an_init(compose, dockerfile, service):
    svc = compose["services"][service]
    image_env = dict(pair.split("=", 1) for op, args in dockerfile if op == "ENV" for pair in args.split())
    for name in ("PAPERBOT_CACHE_DIR", "PAPERBOT_LOG_DIR", "PAPERBOT_HEARTBEAT_FILE", "PAPERBOT_USER_DB"):
        assert svc["environment"][name] == image_env[name], name
    assert svc["init"] is True


def test_the_bot_keeps_its_users_file_on_a_volume(compose):
    bot = compose["services"]["bot"]
    assert "paperbot-data:/data" in bot["volumes"] and "paperbot-data" in compose["volumes"]
    assert bot["environment"]["PAPERBOT_USER_DB"].startswith("/data/")
    assert any(v.endswith(":/corpus:ro") for v in bot["volumes"])


def test_image_health_reads_the_heartbeat_and_the_run_stage_has_no_torch_by_default(dockerfile):
    health = next(args for op, args in dockerfile if op == "HEALTHCHECK")
    assert '"bot.health"' in health
    args = [a for op, a in dockerfile if op == "ARG"]
    assert "EMBEDDING_BACKEND=onnx" in args and "PYTHON_IMAGE=python:3.11-slim-bookworm" in args
    assert "TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu" in args and "PIP_FIND_LINKS=" in args
    runs = " ".join(a for op, a in dockerfile if op == "RUN")
    assert "prune_venv.py torch sentence-transformers" in runs
    assert not (REPO / "Dockerfile").read_text(encoding="utf-8").startswith("# syntax=")


def test_the_shards_profile_runs_two_shards_on_one_chroma_and_one_postgresql(compose):
    services = compose["services"]
    shards = [services["bot-shard-0"], services["bot-shard-1"]]
    postgres = services["postgres"]
    assert all(s["profiles"] == ["shards"] for s in (*shards, postgres)) and "profiles" not in services["bot"]
    assert [s["environment"]["DISCORD_SHARD_IDS"] for s in shards] == ["0", "1"]
    assert {s["environment"]["DISCORD_SHARDS"] for s in shards} == {"2"}
    [url] = {s["environment"]["PAPERBOT_USER_DB"] for s in shards}  # one database for both
    password = "${PAPERBOT_PG_PASSWORD:-}"  # compose fills it in from .env, for the server and its clients alike
    assert url == f"postgresql://paperbot:{password}@postgres:5432/paperbot"
    assert postgres["environment"]["POSTGRES_PASSWORD"] == password
    assert len({s["environment"]["PAPERBOT_LOG_DIR"] for s in shards}) == 2  # one log file per process
    for s in shards:
        assert s["environment"]["CHROMA_HOST"] == "chroma" and s["command"] == ["paperbot", "run"]
        assert s["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert s["depends_on"]["ingest"]["condition"] == "service_completed_successfully"
        assert s["init"] is True and s["env_file"] == [".env"]
    assert postgres["volumes"][0].split(":")[0] in compose["volumes"]
    assert "pg_isready" in postgres["healthcheck"]["test"]
