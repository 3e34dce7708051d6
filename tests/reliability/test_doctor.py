"""`paperbot doctor`: every check passes on a good deployment, and each fault gives its own ✗ line."""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot import doctor
from bot.doctor import run_doctor
from retrieval import integrity
from ingest.store import Store
from retrieval.library import Library
from tests.conftest import make_settings, seed_store
from tests.fakes import HashEmbedder
from tests.integration.servers import free_port
from tests.llm_server import Endpoint
from tests.reliability.helpers import DISCORD_TOKEN, LLM_KEY, generate_corpus

MODELS = {"object": "list", "data": [{"id": "llama3.1:8b", "object": "model"}]}


def models_endpoint(path, headers):
    if headers.get("Authorization") != f"Bearer {LLM_KEY}":
        return 401, {"error": {"message": f"bad key {headers.get('Authorization')}"}}
    return (200, MODELS) if path.split("?")[0] == "/v1/models" else (404, {})


@pytest.fixture(scope="module")
def store_template(tmp_path_factory) -> Path:
    """A folder with 40 generated papers and their store (built with the hash embedder), made once."""
    home = tmp_path_factory.mktemp("doctor-store")
    env = {"PAPERBOT_CORPUS": str(generate_corpus(home / "papers.jsonl", 40))}
    with Library(make_settings(home, **env), embedder=HashEmbedder()) as lib:
        lib.ingest()
        lib.papers()  # as a first start does: the serving view is built and saved beside the store
    return home


@pytest.fixture
def store_env(tmp_path, store_template):
    """Settings env of this test's own copy of the 40-paper store."""
    shutil.copy(store_template / "papers.jsonl", tmp_path / "papers.jsonl")
    seed_store(store_template / "chroma", tmp_path)
    return {"PAPERBOT_CORPUS": str(tmp_path / "papers.jsonl"), "DISCORD_TOKEN": DISCORD_TOKEN}


def doctor_lines(tmp_path, env, embedder=None) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = run_doctor(make_settings(tmp_path, **env), embedder=embedder or HashEmbedder(), out=lines.append)
    return code, lines


def line_of(lines: list[str], name: str) -> str:
    [line] = [ln for ln in lines if ln[2:].startswith(name + ":")]
    return line


def test_good_deployment_passes_every_check(tmp_path, store_env):
    with Endpoint(models_endpoint) as llm:
        code, lines = doctor_lines(tmp_path, {**store_env, "LLM_BASE_URL": llm.base_url,
                                              "LLM_MODEL": "llama3.1:8b", "LLM_API_KEY": LLM_KEY})
    assert code == 0, lines
    names = ["configuration", "embedding model", "store", "contents", "keyword index", "serving view",
             "LLM endpoint", "users file", "Discord token"]
    assert [ln[:1] for ln in lines[:-1]] == ["✓"] * len(names)
    assert [ln[2:].split(":")[0] for ln in lines[:-1]] == names
    assert "40 papers" in line_of(lines, "contents")
    assert "chunks indexed" in line_of(lines, "keyword index")
    assert "current (40 papers" in line_of(lines, "serving view")
    assert lines[-1] == "9 of 9 checks passed"
    assert DISCORD_TOKEN not in "\n".join(lines) and LLM_KEY not in "\n".join(lines)


@pytest.mark.parametrize("change", ["missing", "damaged", "stale"])
def test_a_serving_view_to_rebuild_is_a_warning_that_says_the_next_start_does_it(tmp_path, store_env, change):
    settings = make_settings(tmp_path, **store_env)
    saved = settings.store.path / "paperbot-view-papers.bin"
    assert saved.exists()
    if change == "missing":
        saved.unlink()
    elif change == "damaged":
        saved.write_bytes(saved.read_bytes()[:-100])
    else:
        with Store(settings.store, "test-hash", HashEmbedder().dimension) as store:
            store.bump_version()
    code, lines = doctor_lines(tmp_path, store_env)
    line = line_of(lines, "serving view")
    assert code == 0 and line.startswith("! serving view: ")
    assert {"missing": "missing", "damaged": "truncated", "stale": "stale"}[change] in line
    assert line.endswith("the next start builds it from the store and saves it (once)")


def test_store_built_with_another_model(tmp_path, store_env):
    code, lines = doctor_lines(tmp_path, store_env, embedder=HashEmbedder(name="other-model", dimension=32))
    assert code == 1
    store = line_of(lines, "store")
    assert store.startswith("✗") and "built with embedding model 'test-hash'" in store
    assert "EMBEDDING_MODEL" in store


def test_no_store_yet_says_to_ingest(tmp_path):
    code, lines = doctor_lines(tmp_path, {"DISCORD_TOKEN": DISCORD_TOKEN})
    assert code == 1
    assert line_of(lines, "store").startswith("✗ store: there is no store yet")
    assert "run `paperbot ingest`" in line_of(lines, "store")
    assert not (tmp_path / "chroma").exists()  # the doctor does not create one


def test_a_store_path_under_a_file_says_so_rather_than_to_ingest(tmp_path):
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    code, lines = doctor_lines(tmp_path, {"DISCORD_TOKEN": DISCORD_TOKEN,
                                          "CHROMA_PATH": str(tmp_path / "notes.txt/db")})
    assert code == 1
    assert line_of(lines, "store") == (f"✗ store: CHROMA_PATH={tmp_path}/notes.txt/db cannot be a folder: "
                                       f"{tmp_path}/notes.txt is a file, not a folder → set CHROMA_PATH to a folder "
                                       "paperbot may create and write")


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_damaged_store_database_says_how_to_rebuild(tmp_path, store_env, damage):
    db = tmp_path / "chroma" / "chroma.sqlite3"
    if damage == "garbage":
        db.write_bytes(os.urandom(db.stat().st_size))
    else:
        os.truncate(db, 40_000)
    code, lines = doctor_lines(tmp_path, store_env)
    assert code == 1
    store = line_of(lines, "store")
    assert store.startswith("✗ store: cannot open the store at")
    assert "move it aside and run `paperbot ingest` to rebuild it" in store
    assert "Traceback" not in "\n".join(lines)


def test_interrupted_ingest_shows_as_papers_with_missing_chunks(tmp_path, store_env):
    settings = make_settings(tmp_path, **store_env)
    with Store(settings.store, "test-hash", 64) as store:
        victim = next(r for r in store.iter_chunks(with_text=False) if r.n_chunks > 1)
        store.delete([victim.chunk_id])
    code, lines = doctor_lines(tmp_path, store_env)
    assert code == 1
    contents = line_of(lines, "contents")
    assert contents.startswith("✗") and "1 paper has missing chunks" in contents
    assert victim.paper_id in contents and "run `paperbot ingest` again" in contents


@pytest.mark.parametrize("command, expected", [
    ([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"],
     "crashed the checking process (SIGSEGV)"),
    ([sys.executable, "-c", "import time; time.sleep(60)"], "made no progress for 1 s (opening)"),
    ([sys.executable, "-c", ("import time; print('{\"progress\": \"read 5000 of 9000 chunks\"}', flush=True); "
                             "time.sleep(60)")], "made no progress for 1 s (read 5000 of 9000 chunks)"),
])
def test_store_check_that_crashes_or_hangs_is_a_failed_line_not_a_crash(tmp_path, store_env, monkeypatch, command,
                                                                          expected):
    monkeypatch.setattr(doctor, "probe_command", lambda: command)
    monkeypatch.setattr(doctor, "PROBE_MIN_TIMEOUT", 1.0)
    code, lines = doctor_lines(tmp_path, {**store_env, "CHROMA_TIMEOUT": "0.2"})
    assert code == 1
    assert expected in line_of(lines, "store") and line_of(lines, "store").startswith("✗")
    assert lines[-1].endswith("fix: store")


def test_a_long_store_check_that_keeps_reporting_progress_is_not_cut_short(tmp_path, store_env, monkeypatch):
    """A big store takes longer to read than the stall limit; progress lines keep the check alive."""
    script = ("import json, sys, time\n"
              "request = json.loads(sys.stdin.read())\n"
              "for n in range(8):\n"
              "    print(json.dumps({'progress': f'read {n} chunks'}), flush=True)\n"
              "    time.sleep(0.4)\n"
              "print(json.dumps({'kind': 'missing', 'collection': request['store']['collection']}))\n")
    monkeypatch.setattr(doctor, "probe_command", lambda: [sys.executable, "-c", script])
    monkeypatch.setattr(doctor, "PROBE_MIN_TIMEOUT", 1.0)
    started = time.monotonic()
    _, lines = doctor_lines(tmp_path, {**store_env, "CHROMA_TIMEOUT": "0.2"})
    assert time.monotonic() - started > 3.0  # ran past the 1 s limit three times over
    assert line_of(lines, "store").startswith("✗ store: there is no store yet at"), lines


@pytest.mark.parametrize("answer, model, expected", [
    (None, "llama3.1:8b", "cannot reach http://127.0.0.1:"),
    (lambda p, h: (401, {"error": {"message": f"bad key {h.get('Authorization')}"}}), "llama3.1:8b",
     "refused the credentials (HTTP 401) → check LLM_API_KEY"),
    (lambda p, h: (500, {"error": LLM_KEY}), "llama3.1:8b", "answered HTTP 500"),
])
def test_llm_endpoint_problems(tmp_path, store_env, caplog, answer, model, expected):
    caplog.set_level(logging.DEBUG)
    if answer is None:
        env = {"LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}
        code, lines = doctor_lines(tmp_path, {**store_env, **env, "LLM_MODEL": model, "LLM_API_KEY": LLM_KEY})
    else:
        with Endpoint(answer) as llm:
            code, lines = doctor_lines(tmp_path, {**store_env, "LLM_BASE_URL": llm.base_url, "LLM_MODEL": model,
                                                  "LLM_API_KEY": LLM_KEY})
    assert code == 1
    line = line_of(lines, "LLM endpoint")
    assert line.startswith("✗") and expected in line
    assert LLM_KEY not in "\n".join(lines) + caplog.text


def test_an_unlisted_llm_model_is_a_warning_not_a_failure(tmp_path, store_env):
    """llama-server answers under any name: doctor lists what is served and warns, the deployment passes."""
    with Endpoint(models_endpoint) as llm:
        code, lines = doctor_lines(tmp_path, {**store_env, "LLM_BASE_URL": llm.base_url + "?api-version=2024",
                                              "LLM_MODEL": "mistral", "LLM_API_KEY": LLM_KEY})
        assert llm.requests[-1]["path"] == "/v1/models?api-version=2024"
    assert code == 0, lines
    line = line_of(lines, "LLM endpoint")
    assert line.startswith("! LLM endpoint:") and "serves llama3.1:8b; LLM_MODEL='mistral' is not among them" in line
    assert "→" in line and "any name" in line
    assert lines[-1] == "9 of 9 checks passed"


def test_a_listed_llm_model_shows_what_is_served(tmp_path, store_env):
    with Endpoint(models_endpoint) as llm:
        code, lines = doctor_lines(tmp_path, {**store_env, "LLM_BASE_URL": llm.base_url, "LLM_MODEL": "llama3.1:8b",
                                              "LLM_API_KEY": LLM_KEY})
    assert code == 0 and line_of(lines, "LLM endpoint").endswith("model 'llama3.1:8b'; it serves llama3.1:8b")


@pytest.mark.parametrize("token, expected", [
    ("", "DISCORD_TOKEN is not set"),
    ("1234567890123456789", "not shaped like a bot token (19 characters)"),  # the application id
    ("MTIz.abc-secret-value", "not shaped like a bot token"),
])
def test_malformed_discord_token_is_reported_without_showing_it(tmp_path, store_env, caplog, token, expected):
    caplog.set_level(logging.DEBUG)
    code, lines = doctor_lines(tmp_path, {**store_env, "DISCORD_TOKEN": token})
    assert code == 1
    line = line_of(lines, "Discord token")
    assert line.startswith("✗") and expected in line
    if token:
        assert token not in "\n".join(lines) + caplog.text


def _ingest(tmp_path: Path, env: dict) -> None:
    with Library(make_settings(tmp_path, **env), embedder=HashEmbedder()) as lib:
        lib.ingest()


@pytest.fixture(scope="module")
def indexed_store(tmp_path_factory) -> tuple[Path, dict]:
    """A store past ~1000 chunks, whose vectors Chroma keeps in an HNSW index beside the database.

    The ingest runs in a process of its own: once it has exited, no Chroma in this process
    holds the index in memory and could write it again over the damage a test does to a copy.
    """
    home = tmp_path_factory.mktemp("indexed")
    env = {"PAPERBOT_CORPUS": str(generate_corpus(home / "papers.jsonl", 700)), "DISCORD_TOKEN": DISCORD_TOKEN}
    ingest = multiprocessing.get_context("spawn").Process(target=_ingest, args=(home, env))
    ingest.start()
    ingest.join(300)
    assert ingest.exitcode == 0
    return home, env


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "zeroed"])
def test_damaged_vector_index_is_caught_by_the_store_check(tmp_path, indexed_store, damage):
    home, env = indexed_store
    seed_store(home / "chroma", tmp_path)
    files = [p / "data_level0.bin" for p in (tmp_path / "chroma").iterdir() if (p / "data_level0.bin").is_file()]
    assert files, "no HNSW index on disk to damage"
    for f in files:  # the chunks' index and the sentences' index
        size = f.stat().st_size
        if damage == "truncated":
            os.truncate(f, 1000)
        else:  # the second half of every file overwritten with zeros, its size unchanged
            with open(f, "r+b") as fh:
                fh.seek(size // 2)
                fh.write(bytes(size - size // 2))
    damaged = {f: f.read_bytes() for f in files}
    code, lines = doctor_lines(tmp_path, env)
    assert all(f.read_bytes() == data for f, data in damaged.items()), "the damage was written over"
    assert code == 1, lines
    store = line_of(lines, "store")
    assert store.startswith("✗ store:") and "the store at" in store, store
    assert "move it aside and run `paperbot ingest`" in store


class LostGraph:
    """A store whose vector index has lost its links: every search ends at its entry point, the first chunk."""

    def __init__(self, store: Store, first: str) -> None:
        self.store, self.dimension, self.first = store, store.dimension, first

    def get_embeddings(self, ids):
        return self.store.get_embeddings(ids)

    def query(self, vector, n):
        return [(self.first, 1.0)]


class NoVectorFor:
    """A store that cannot give one chunk's vector back."""

    def __init__(self, store: Store, missing: str) -> None:
        self.store, self.dimension, self.missing = store, store.dimension, missing

    def get_embeddings(self, ids):
        return {cid: v for cid, v in self.store.get_embeddings(ids).items() if cid != self.missing}

    def query(self, vector, n):
        return self.store.query(vector, n)


def test_store_check_reads_every_vector_and_searches_for_chunks_with_their_own_vectors(tmp_path, store_env):
    from retrieval.view import CorpusView

    with Store(make_settings(tmp_path, **store_env).store, "test-hash", HashEmbedder().dimension) as store:
        def fresh_view() -> CorpusView:  # a view keeps the vectors it has read: one per store seen
            return CorpusView.from_store(store, store.content_version())

        view = fresh_view()
        assert integrity.vector_problem(store, view) == ""
        problem = integrity.vector_problem(LostGraph(store, view.chunk_ids[0]), fresh_view())
        lost_vector = view.chunk_ids[len(view.chunk_ids) // 2]
        unreadable = integrity.vector_problem(NoVectorFor(store, lost_vector), fresh_view())
    assert unreadable == f"1 of {len(view.chunk_ids)} chunk vectors are missing or unreadable, e.g. {lost_vector}"
    sampled = min(integrity.SELF_SEARCH_SAMPLE, len(view.chunk_ids))
    assert sampled > 10
    # the first chunk finds itself; every other one sampled is lost
    assert problem.startswith(f"searching for {sampled} stored chunks with their own vectors did not find "
                              f"{sampled - 1} of them, e.g. ")


@pytest.mark.slow
def test_paperbot_doctor_command_never_shows_the_token_or_key(tmp_path):
    """The real command, real model: a failing LLM that echoes the key and a malformed token, logged at DEBUG."""
    bad_token = DISCORD_TOKEN.replace(".", "")  # one long string: not shaped like a token, still secret
    with Endpoint(lambda p, h: (401, {"error": f"key {h.get('Authorization')} and {bad_token} rejected"})) as llm:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "DISCORD_", "LLM_", "PAPERBOT_"))}
        env.update(CHROMA_PATH=str(tmp_path / "chroma"), PAPERBOT_CACHE_DIR=str(tmp_path / "cache"),
                   PAPERBOT_LOG_DIR=str(tmp_path / "logs"), PAPERBOT_LOG_LEVEL="DEBUG",
                   PAPERBOT_ENV_FILE=str(tmp_path / "none.env"), HF_HUB_OFFLINE="1", DISCORD_TOKEN=bad_token,
                   LLM_BASE_URL=llm.base_url, LLM_MODEL="llama3.1:8b", LLM_API_KEY=LLM_KEY)
        proc = subprocess.run([sys.executable, "-m", "bot.cli", "-v", "doctor"], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "✓ embedding model: 'all-MiniLM-L6-v2' loads offline (384 dimensions" in out
    assert "✗ store: there is no store yet" in out
    assert "✗ LLM endpoint:" in out and "HTTP 401" in out
    assert "✗ Discord token: DISCORD_TOKEN is not shaped like a bot token" in out
    assert "Traceback" not in proc.stderr
    logs = "".join(p.read_text() for p in Path(tmp_path / "logs").glob("paperbot.log*"))
    for secret in (bad_token, LLM_KEY):
        assert secret not in out and secret not in proc.stderr and secret not in logs


def test_the_users_file_is_checked_read_only_and_a_damaged_one_fails(tmp_path, store_env):
    from paperbot.userdata import UserData

    settings = make_settings(tmp_path, **store_env)
    _, lines = doctor_lines(tmp_path, store_env)
    assert "not created yet" in line_of(lines, "users file") and not settings.user_db_path.exists()
    users = UserData(settings.user_db_path)
    users.save(1, ["a", "b"])
    users.add_watch(2, "diffusion")
    _, lines = doctor_lines(tmp_path, store_env)
    assert line_of(lines, "users file").startswith("✓") and "2 users, 2 saved papers, 1 watch (wal)" in line_of(
        lines, "users file")
    for suffix in ("-wal", "-shm"):
        settings.user_db_path.with_name(settings.user_db_path.name + suffix).unlink(missing_ok=True)
    settings.user_db_path.write_bytes(b"not a database " * 200)
    code, lines = doctor_lines(tmp_path, store_env)
    line = line_of(lines, "users file")
    assert code == 1 and line.startswith("✗") and str(settings.user_db_path) in line and "PAPERBOT_USER_DB" in line


def test_the_store_probe_does_not_see_the_bots_secrets(monkeypatch):
    monkeypatch.setenv("DISCORD_TOKEN", "secret-discord")
    monkeypatch.setenv("LLM_API_KEY", "secret-llm")
    monkeypatch.setenv("OPENAI_API_KEY", "secret-openai")
    monkeypatch.setenv("CHROMA_AUTH_TOKEN", "secret-chroma")
    monkeypatch.setenv("PAPERBOT_DATABASE_URL", "postgresql://bot:secret-pg@db/paperbot")
    env = doctor._child_env()
    assert not [k for k, v in env.items() if "secret-" in v], env.keys()
    assert env["PATH"] == os.environ["PATH"]
    assert str(doctor.PACKAGES_ROOT) in env["PYTHONPATH"].split(os.pathsep)


def test_doctor_says_when_a_running_bots_store_child_is_restarting(tmp_path):
    import time as clock

    from bot.health import Beat, write_beat

    settings = make_settings(tmp_path, PAPERBOT_HEARTBEAT_FILE=str(tmp_path / "beat.json"))
    assert doctor.check_running_bot(settings) is None  # no bot running: no line
    now = clock.time()
    write_beat(settings.heartbeat_path, Beat(time=now, pid=4242, interval=5.0, state="connected", since=now,
                                             store="restarting", store_restarts=0))
    check = doctor.check_running_bot(settings)
    assert check is not None and check.ok and check.warning
    assert "pid 4242" in check.detail and "being started again" in check.detail
    write_beat(settings.heartbeat_path, Beat(time=now, pid=4242, interval=5.0, state="connected", since=now,
                                             store="serving", store_restarts=2))
    assert "started again 2 times" in doctor.check_running_bot(settings).detail
    write_beat(settings.heartbeat_path, Beat(time=now - 60, pid=4242, interval=5.0, state="connected", since=now))
    assert doctor.check_running_bot(settings) is None  # stale: that bot is gone
