"""Shared fixtures: an isolated environment, the real bundled model, real Chroma in temp dirs."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import pytest

from paperbot.settings import BUNDLED_CORPUS, EmbeddingSettings, Settings, default_cache_dir

REPO = Path(__file__).resolve().parent.parent
_ISOLATED_PREFIXES = ("CHROMA_", "EMBEDDING_", "RETRIEVAL_", "DISCORD_", "LLM_", "OPENAI_", "PAPERBOT_")


def pytest_collection_modifyitems(config, items):
    """Files with slow tests run first: with several workers (-n) the long ones start at once, not last."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)  # stable: each file's tests stay together, in order


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """No test sees the developer's .env, store or cache; every store lives in tmp_path."""
    for name in list(os.environ):
        if name.startswith(_ISOLATED_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CHROMA_PATH", str(tmp_path / "chroma"))
    monkeypatch.setenv("PAPERBOT_CACHE_DIR", str(tmp_path / "cache"))
    # The model's ONNX export is made once per machine (scripts/setup.sh makes it), not once per test.
    monkeypatch.setenv("EMBEDDING_CACHE_DIR", str(default_cache_dir()))
    monkeypatch.setenv("PAPERBOT_ENV_FILE", str(tmp_path / "no.env"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    yield


def jsonl(records: list[dict]) -> bytes:
    """Paper records as a JSONL file's bytes."""
    return "\n".join(json.dumps(r) for r in records).encode("utf-8")


@contextlib.contextmanager
def hashed_library(tmp: Path, records: list[dict]):
    """A Library over one JSONL program of `records`, ingested with the hashing embedder into real Chroma
    (where retrieval quality is beside the point)."""
    from retrieval.library import Library
    from tests.fakes import HashEmbedder

    corpus = tmp / "corpus"
    corpus.mkdir()
    (corpus / "program.jsonl").write_bytes(jsonl(records))
    with Library(make_settings(tmp, PAPERBOT_CORPUS=str(corpus)), embedder=HashEmbedder()) as lib:
        lib.ingest()
        yield lib


def make_settings(tmp: Path, **env: str) -> Settings:
    base = {"CHROMA_PATH": str(tmp / "chroma"), "PAPERBOT_CACHE_DIR": str(tmp / "cache"),
            "EMBEDDING_CACHE_DIR": str(default_cache_dir())}
    base.update(env)
    return Settings.from_env(base)


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server for the session (tests/postgres.py); each test makes its own database on it."""
    from tests.postgres import start_postgres

    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def users_db(request, tmp_path) -> Path | str:
    """Where the users' data lives, once for each database paperbot keeps it in: a SQLite file, a PostgreSQL URL."""
    if request.param == "sqlite":
        return tmp_path / "users.sqlite3"
    return request.getfixturevalue("postgres").new_database()


@pytest.fixture(scope="session")
def embedder():
    """The real bundled all-MiniLM-L6-v2, loaded once per test session."""
    from ingest.embed import Embedder

    e = Embedder(EmbeddingSettings.from_env())
    e.encode(["warm up"])
    return e


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory) -> Path:
    """A private copy of the bundled corpus (tests may not change the user's data)."""
    d = tmp_path_factory.mktemp("corpus")
    for f in BUNDLED_CORPUS.iterdir():
        shutil.copy(f, d / f.name)
    return d


@pytest.fixture(scope="session")
def library(tmp_path_factory, embedder, corpus_dir, bundled_store):
    """A Library over the bundled corpus, ingested once with the real model into real Chroma.

    Shared by tests that only read; tests that write build their own.
    """
    from retrieval.library import Library

    tmp = tmp_path_factory.mktemp("lib")
    seed_store(bundled_store, tmp)  # the same papers: the ingest finds nothing to embed
    lib = Library(make_settings(tmp, PAPERBOT_CORPUS=str(corpus_dir)), embedder=embedder)
    lib.ingest()
    yield lib
    lib.close()


@pytest.fixture(scope="session")
def bundled_store(tmp_path_factory, embedder) -> Path:
    """The bundled corpus ingested once with the default settings: a `chroma` folder to copy.

    A process started over a copy (`seed_store`) serves at once instead of embedding the
    corpus again; tests of the first ingest itself start from an empty store instead.
    """
    from retrieval.library import Library

    home = tmp_path_factory.mktemp("bundled-store")
    with Library(make_settings(home), embedder=embedder) as lib:
        lib.ingest()
        lib.papers()  # the serving view is saved beside the store, as after a first start
    return home / "chroma"


def seed_store(store: Path, home: Path) -> None:
    """Put a copy of an ingested store (e.g. `bundled_store`) where `home`'s settings look for it."""
    shutil.copytree(store, home / "chroma", ignore=shutil.ignore_patterns("*.lock"))
