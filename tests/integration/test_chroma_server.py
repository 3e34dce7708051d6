"""Server mode against a real `chroma run`: ingest, search, cross-process freshness, dead servers."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from ingest.store import Store
from paperbot.errors import StoreError, StoreUnavailableError
from paperbot.settings import Settings
from retrieval.library import Library

from .servers import free_port, start_chroma

PAPERS = {
    "coral": ("Coral reef bleaching under marine heatwaves",
              "We track coral reef bleaching across three marine heatwaves using satellite sea surface temperature. "
              "Bleaching severity follows accumulated heat stress, and reefs with shaded lagoons recover faster."),
    "qec": ("Surface codes for quantum error correction",
            "Surface codes protect logical qubits by measuring stabilizers on a lattice of physical qubits. "
            "We show a decoder that lowers the logical error rate below the threshold on superconducting hardware."),
    "fold": ("Protein structure prediction from single sequences",
             "We predict protein structure from a single amino acid sequence without multiple sequence alignments. "
             "The model folds orphan proteins with accuracy close to alignment-based methods."),
    "traffic": ("Traffic signal control with reinforcement learning",
                "City traffic signals are controlled by a reinforcement learning agent trained in simulation. "
                "Average commute delay falls by a fifth across intersections of a downtown grid."),
    "mt": ("Machine translation for low-resource languages",
           "We translate between low-resource languages by pivoting through related high-resource languages. "
           "Back-translation with a small parallel corpus improves BLEU on four language pairs."),
    "glacier": ("Modelling glacier melt in the Himalaya",
                "Glacier melt in the Himalaya is modelled from debris cover, albedo and monsoon precipitation. "
                "Debris-covered glaciers lose less ice than clean glaciers at the same altitude."),
}
QUOKKA = ("quokka", "A camera-trap census of quokka populations",
          "Camera traps on Rottnest Island count quokka populations through the dry season. "
          "Quokka numbers fall where tourist feeding is common, and recover after feeding is banned.")


def write_corpus(path: Path, ids: list[str], extra: tuple[str, str, str] | None = None) -> Path:
    rows = [{"id": pid, "title": PAPERS[pid][0], "abstract": PAPERS[pid][1]} for pid in ids]
    if extra:
        rows.append({"id": extra[0], "title": extra[1], "abstract": extra[2]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def within(seconds: float, fn, *args):
    """Run fn in a worker thread; a call that hangs fails the test instead of hanging it."""
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = fn(*args)
        except BaseException as exc:  # handed back to the test thread
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail(f"still waiting after {seconds:g}s: the call hangs instead of timing out")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def server_env(monkeypatch, server, **extra: str) -> Settings:
    """Point this process at the server, with a collection of its own."""
    env = {**server.env, "CHROMA_COLLECTION": f"t-{uuid.uuid4().hex[:12]}", "CHROMA_TIMEOUT": "5", **extra}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return Settings.from_env()


@pytest.mark.slow
def test_ingest_and_search_go_through_the_server(chroma_server, embedder, monkeypatch, tmp_path):
    settings = server_env(monkeypatch, chroma_server)
    corpus = write_corpus(tmp_path / "papers.jsonl", list(PAPERS))

    with Library(settings, embedder=embedder) as lib:
        summary = lib.ingest([corpus])
        assert (summary.added, summary.removed) == (len(PAPERS), 0)
        stats = lib.stats()
        assert stats.papers == len(PAPERS)
        assert f"127.0.0.1:{chroma_server.port}" in stats.store

        result = lib.search("how do surface codes protect logical qubits from errors", k=3)
        assert not result.abstained
        assert result.hits[0].paper_id == "qec"
        assert len({h.paper_id for h in result.hits}) == len(result.hits) == 3
        abstracts = {p.paper_id: p.abstract for p in lib.papers()}
        assert abstracts["qec"] == PAPERS["qec"][1]
        for hit in result.hits:
            for quote in hit.quotes:
                assert abstracts[hit.paper_id][quote.start:quote.end] == quote.text

        chunks = lib.store.count()
        again = lib.ingest([corpus])
        assert (again.unchanged, again.added, again.chunks_embedded) == (len(PAPERS), 0, 0)
        assert lib.store.count() == chunks

    # The data lives on the server: a new client sees it, and nothing was written to CHROMA_PATH.
    with Library(settings, embedder=embedder) as fresh:
        assert fresh.search("glacier melt under debris cover", k=1).hits[0].paper_id == "glacier"
    assert not settings.store.path.exists()


class BotProcess:
    """`paperbot search --json` reading one query per stdin line: a long-lived second process."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "search", "--json", "-k", "3"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)

    def search(self, query: str, timeout: float = 180) -> dict:
        assert self.proc.poll() is None, self.proc.stderr.read()
        self.proc.stdin.write(query + "\n")
        self.proc.stdin.flush()
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            pytest.fail(f"no answer from the bot process within {timeout}s")

    def close(self) -> tuple[int, str]:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.returncode, self.proc.stderr.read()


@pytest.mark.slow
def test_other_process_sees_ingested_changes_without_restart(chroma_server, embedder, monkeypatch, tmp_path):
    settings = server_env(monkeypatch, chroma_server)
    corpus = tmp_path / "papers.jsonl"
    write_corpus(corpus, list(PAPERS))

    with Library(settings, embedder=embedder) as ingester:
        ingester.ingest([corpus])
        bot = BotProcess(dict(os.environ), tmp_path)
        try:
            before = bot.search("quokka census on Rottnest Island")
            assert "quokka" not in [h["paper_id"] for h in before["hits"]]
            assert bot.search("coral reef bleaching heatwaves")["hits"][0]["paper_id"] == "coral"

            # The ingest process replaces the coral paper by the quokka paper.
            write_corpus(corpus, [p for p in PAPERS if p != "coral"], extra=QUOKKA)
            summary = ingester.ingest([corpus])
            assert (summary.added, summary.removed) == (1, 1)

            after = bot.search("quokka census on Rottnest Island")
            assert after["hits"][0]["paper_id"] == "quokka"
            assert not after["abstained"]
            assert "Rottnest Island" in after["hits"][0]["snippet"]
            gone = bot.search("coral reef bleaching heatwaves")
            assert "coral" not in [h["paper_id"] for h in gone["hits"]]
        finally:
            code, stderr = bot.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr


@pytest.mark.slow
def test_paused_then_stopped_server_fails_within_timeout(embedder, monkeypatch, tmp_path):
    server = start_chroma(tmp_path / "paused")
    try:
        settings = server_env(monkeypatch, server, CHROMA_TIMEOUT="2")
        corpus = write_corpus(tmp_path / "papers.jsonl", list(PAPERS))
        with Library(settings, embedder=embedder) as lib:
            lib.ingest([corpus])
            assert lib.search("protein folding from one sequence", k=1).hits[0].paper_id == "fold"

            server.proc.send_signal(signal.SIGSTOP)
            with pytest.raises(StoreUnavailableError, match=r"did not answer within CHROMA_TIMEOUT=2s") as err:
                within(2 + 5, lib.search, "protein folding from one sequence", 1)
            assert err.value.retryable

            server.proc.send_signal(signal.SIGCONT)
            assert lib.search("protein folding from one sequence", k=1).hits[0].paper_id == "fold"

            server.stop()
            with pytest.raises(StoreUnavailableError, match=r"cannot reach the Chroma server"):
                lib.search("protein folding from one sequence", k=1)
    finally:
        server.stop()


def store_settings(monkeypatch, port: int, timeout: str = "1"):
    monkeypatch.setenv("CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("CHROMA_PORT", str(port))
    monkeypatch.setenv("CHROMA_TIMEOUT", timeout)
    return Settings.from_env().store


def test_server_that_never_answers_fails_within_timeout(monkeypatch):
    with socket.socket() as silent:  # accepts connections (kernel backlog) and never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        settings = store_settings(monkeypatch, silent.getsockname()[1])
        with pytest.raises(StoreUnavailableError) as err:
            within(1 + 5, Store, settings, "fake-model", 4)
    assert "did not answer within CHROMA_TIMEOUT=1s" in str(err.value)
    assert err.value.retryable


def test_nothing_listening_names_the_settings_to_check(monkeypatch):
    settings = store_settings(monkeypatch, free_port())
    with pytest.raises(StoreUnavailableError) as err:
        Store(settings, "fake-model", 4)
    message = str(err.value)
    assert f"cannot reach the Chroma server at http://127.0.0.1:{settings.port}" in message
    assert "chroma run" in message and "CHROMA_HOST" in message


def test_not_a_chroma_server_or_bad_token_is_reported(monkeypatch):
    """An HTTP server that is not Chroma, or that rejects the token, gets a message saying so."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            seen.append(self.headers.get("Authorization"))
            self.send_response(401 if self.headers.get("Authorization") == "Bearer wrong" else 404)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        port = httpd.server_address[1]
        with pytest.raises(StoreUnavailableError, match=r"answered HTTP 404.*Chroma 1\.x server"):
            Store(store_settings(monkeypatch, port), "fake-model", 4)
        monkeypatch.setenv("CHROMA_AUTH_TOKEN", "wrong")
        with pytest.raises(StoreError, match="refused the credentials.*CHROMA_AUTH_TOKEN") as err:
            Store(store_settings(monkeypatch, port), "fake-model", 4)
        assert not err.value.retryable
        assert "wrong" not in str(err.value)
    finally:
        httpd.shutdown()
    assert seen == [None, "Bearer wrong"]


@pytest.mark.slow
def test_a_server_store_in_the_per_key_layout_is_served_and_upgraded_through_the_server(chroma_server, embedder,
                                                                                         monkeypatch, tmp_path):
    """Chroma merges an update into the stored metadata; the earlier layout's keys are removed through the
    server as they are in the embedded store."""
    from benchmarks.store_writes import previous_layout
    from ingest.parse import parse_file
    from ingest.pipeline import paper_chunks

    settings = server_env(monkeypatch, chroma_server)
    rows = [{"id": pid, "title": PAPERS[pid][0], "abstract": PAPERS[pid][1], "area": "Science"} for pid in ("qec", "mt")]
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with Library(settings, embedder=embedder) as lib:
        chunks = [(p, c) for p in parse_file(corpus) for c in paper_chunks(p, embedder)]
        lib.store._collection.upsert(
            ids=[c.chunk_id for _, c in chunks], embeddings=embedder.encode([f"{p.title}. {c.text}" for p, c in chunks]),
            documents=[c.text for _, c in chunks],
            metadatas=[previous_layout(p, index=int(c.chunk_id.rsplit(":", 1)[1]),
                                       n_chunks=sum(q is p for q, _ in chunks), start=c.start, end=c.end)
                       for p, c in chunks])
        lib.store.bump_version()
        assert lib.paper("qec").abstract == PAPERS["qec"][1] and lib.paper("qec").area == "Science"
        rows[0]["area"] = "Quantum computing"
        corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        summary = lib.ingest([corpus])
        assert (summary.updated, summary.chunks_embedded) == (1, 0)
        metas = lib.store._collection.get(include=["metadatas"])["metadatas"]
        assert {tuple(sorted(m)) for m in metas if m["paper_id"] == "qec"} == {("embed_hash", "paper_id", "record")}
        assert all(set(m) == {"embed_hash", "paper_id", "record"} for m in metas), "the unchanged paper too"
        assert lib.paper("qec").area == "Quantum computing" and lib.paper("qec").abstract == PAPERS["qec"][1]
        assert lib.paper("mt").area == "Science" and lib.store._fresh_metadata()["schema_version"] == 2
