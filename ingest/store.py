"""The Chroma collection that holds chunks, their embeddings and paper metadata.

One code path for both deployments: an embedded ``PersistentClient`` at
CHROMA_PATH (guarded by a file lock, since two processes writing one embedded
store can corrupt it), or an ``HttpClient`` to a ``chroma run`` server when
CHROMA_HOST is set. The bot serves its embedded store from a child ``chroma run``
(``ingest.chroma_child``) and talks to it as to a server, keeping the lock
itself. Embeddings are always passed in explicitly; the collection
has no embedding function, so Chroma's default model can never run.

The collection metadata pins the embedding model (name and dimension) and the
stored layout (``schema_version``), and carries a ``content_version`` that changes
on every write, so keyword indexes in other processes know when to rebuild.
"""

from __future__ import annotations

import enum
import itertools
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path

import numpy as np

from ingest.chroma_child import LOG_NAME, STOP_TIMEOUT, ChromaChild
from ingest.cores import on_one_core
from ingest.sentence_rows import SNIPPETS_SUFFIX, SnippetRows
from paperbot.errors import (
    CollectionMissingError,
    ConfigError,
    ModelMismatchError,
    PaperbotError,
    StoreError,
    StoreLockedError,
    StoreRestartingError,
    StoreUnavailableError,
)
from paperbot.records import StoredChunk
from paperbot.settings import Secret, StoreSettings

log = logging.getLogger(__name__)

# Seconds before each attempt to start a dead child again (the last repeats until it serves or the store closes).
RESTART_WAITS = (0.2, 1.0, 5.0, 15.0, 60.0)
# How long a failed call waits for a child that may be dying: a call can fail in the instant between the child's
# SIGKILL and its exit, and is then a restart, not a store error.
CHILD_EXIT_GRACE = 0.5
PREVIOUS_LOG = LOG_NAME.replace(".log", ".previous.log")  # the dead child's output, kept beside the new one's

LOG_CHANGE_ATTEMPTS = 3  # tries to shorten an older store's write log (see Store._keep_log_short)
LOCK_NAME = "paperbot.lock"
# The stored layout: 1, each chunk's fields as separate metadata keys and its text as the Chroma document;
# 2, chunks may hold their fields and text as one JSON record (paperbot.records.chunk_metadata). Every write
# records it; a store of a later layout than this code knows is refused instead of being read as empty.
SCHEMA_VERSION = 2
# Chunks read per request when paging through the store; larger pages make Chroma hold much more memory.
PAGE = 500
# Rows written per call. Chroma's embedded client holds the GIL through a whole write (it releases it only
# for reads), fsync and index maintenance included, so one call of a few thousand rows stalls every other
# thread of the process (a bot's event loop) for seconds; small calls with a short pause between them let
# the other threads run (benchmarks/loop_lag.py). In a store of thousands of papers a 32-row call still held
# it over 100 ms dozens of times in a 6,000-paper /reindex, a 16-row call 11 times (with a chunk's fields as
# 29 keys; with the JSON record of records.chunk_metadata, none in two runs). But a call's cost
# is mostly fixed: alone, 2,048 rows took 3.6 s in 32-row calls and 2.0 s in 128-row calls, and a lone
# `paperbot ingest` writes each embedded batch (about 190 chunks) in one call (docs/benchmarks.md). So the
# calls are small, and paused between, only in a process that serves (Writes.SHARED).
WRITE_BATCH = 256
SHARED_WRITE_BATCH = 16  # rows per call in a process that serves (a bot, `paperbot chat`)
WRITE_PAUSE = 0.01  # seconds between two write calls there, so that its event loop gets the GIL
# Log entries Chroma keeps per collection until it next saves the collection's vector index (its default is
# 1,000). Every write call reads the whole log back with the GIL held, so a bot's write calls grew slower as
# the log grew: written beside a sleeping thread into a store of 6,000 papers, with at most 100 entries chunks
# took 0.71-0.79x the time and sentence-vector rows (about 10 KB each) 0.50-0.64x, a lone ingest's writes about
# as long as before (benchmarks/write_log.py, docs/benchmarks.md).
LOG_ENTRIES = 100


def _chroma_settings():
    from chromadb.config import Settings as ChromaSettings

    return ChromaSettings(anonymized_telemetry=False, allow_reset=False)


def no_temp_dir() -> bool:
    """True when no temporary folder is writable (a read-only root file system without a tmpfs)."""
    import tempfile

    try:
        with tempfile.TemporaryFile():
            return False
    except OSError:
        return True


class Writes(enum.Enum):
    """How a store's writes share their process; the front end that opens the store says which.

    ALONE: the writes are the process's only work (`paperbot ingest`, `search`, …: ingest/pipeline.py then
    embeds larger batches, ingest.cores keeps the embedded Chroma's threads on one core during a write call).
    SHARED: an event loop answers beside them (the bot, `paperbot chat`, `paperbot ask`): small write calls
    with a pause between them, small embedding batches, threads left where they are.
    """

    ALONE = "alone"
    SHARED = "shared"


class Store:
    """A paperbot collection in Chroma, embedded or remote."""

    def __init__(self, settings: StoreSettings, model_name: str, dimension: int, create: bool = True,
                 child: bool = False, writes: Writes = Writes.SHARED) -> None:
        """`child`: an embedded store is served by Chroma's server in a child process (ingest.chroma_child),
        so that Chroma's work never holds this process's GIL; the bot opens its store so. `writes`: see Writes."""
        self.settings = settings
        self.writes = writes
        self.model_name = model_name
        self.dimension = dimension
        self._lock = None
        self._child: ChromaChild | None = None
        self._restart_lock = threading.Lock()
        self._restarter: threading.Thread | None = None  # brings a dead child back (see `_bring_back`)
        self._closed = threading.Event()
        self.child_restarts = 0  # children started again after one died
        self._client = self._connect(child and not settings.is_server)
        try:
            self._collection = self._open_collection(create)
            self.snippets = SnippetRows(self, self._open_snippets(create))
        except BaseException:
            self.close()  # a refused open (e.g. another model) must not keep the embedded store locked
            raise

    # -- opening -----------------------------------------------------------------

    def _connect(self, child: bool):
        import chromadb

        s = self.settings
        if s.is_server:
            return self._connect_server(s)
        self._lock = _acquire_lock(s.path)
        if child:
            try:
                self._child = ChromaChild(s.path)
                return self._connect_server(replace(s, host=ChromaChild.host, port=self._child.port, ssl=False,
                                                    auth_token=Secret("")))
            except BaseException:
                self.close()
                raise
        try:
            return chromadb.PersistentClient(path=str(s.path), settings=_chroma_settings())
        except Exception as exc:
            self.close()
            log.debug("opening the embedded store failed", exc_info=True)
            if no_temp_dir():  # SQLite fails with "disk I/O error", which is no reason to rebuild the store
                raise StoreError(
                    f"cannot open the store at {s.path}: there is no writable temporary folder (TMPDIR, /tmp, "
                    "/var/tmp), which SQLite needs. On a read-only root file system mount one, e.g. "
                    "`docker run --read-only --tmpfs /tmp ...`.") from None
            raise StoreError(
                f"cannot open the store at {s.path} ({type(exc).__name__}: {exc}). If it is damaged, "
                f"move it aside and run `paperbot ingest` to rebuild it.") from None

    def _connect_server(self, s: StoreSettings):
        """An HttpClient whose every request gives up after CHROMA_TIMEOUT seconds.

        Chroma's client waits forever by default and already talks to the server
        while it is being built, so reachability is checked first with a bounded
        heartbeat, and the bound is then applied to the client's own requests.
        """
        import chromadb

        headers = {"Authorization": f"Bearer {s.auth_token}"} if s.auth_token else None
        _check_heartbeat(s, headers)
        if not s.host:
            raise StoreError("no Chroma server host is set (CHROMA_HOST)")
        with self.errors("connect"):
            client = chromadb.HttpClient(host=s.host, port=s.port, ssl=s.ssl, headers=headers,
                                         settings=_chroma_settings())
        _bound_requests(client, s.timeout)
        return client

    def _open_collection(self, create: bool):
        name = self.settings.collection
        with self.errors(f"open collection {name!r}"):
            if create:
                col = self._client.get_or_create_collection(
                    name,
                    embedding_function=None,
                    metadata={
                        "hnsw:space": "cosine",
                        "embedding_model": self.model_name,
                        "embedding_dimension": self.dimension,
                        "schema_version": SCHEMA_VERSION,
                        "content_version": "empty",
                    },
                )
            else:
                from chromadb.errors import NotFoundError

                try:
                    col = self._client.get_collection(name, embedding_function=None)
                except NotFoundError:
                    raise CollectionMissingError(f"the store at {self.where} has no collection {name!r}") from None
        if create:
            col = self._keep_log_short(col)
        meta = col.metadata or {}
        layout = meta.get("schema_version", 1)
        if not isinstance(layout, int) or layout > SCHEMA_VERSION:
            raise StoreError(
                f"the store at {self.where} was written by a newer paperbot (stored layout {layout!r}; this "
                f"version reads layouts up to {SCHEMA_VERSION}). Upgrade paperbot here, or ingest into another "
                "CHROMA_COLLECTION with this version.")
        stored_model, stored_dim = meta.get("embedding_model"), meta.get("embedding_dimension")
        if stored_model != self.model_name or stored_dim != self.dimension:
            raise ModelMismatchError(
                f"the store at {self.where} was built with embedding model {stored_model!r} "
                f"(dimension {stored_dim}), but the configured embedder is {self.model_name!r} (dimension {self.dimension}; "
                f"EMBEDDING_MODEL, with +EMBEDDING_BACKEND for onnx-int8). Use the same model and backend, "
                f"or choose another CHROMA_COLLECTION and run `paperbot ingest`.")
        return col

    def _open_snippets(self, create: bool):
        """The companion collection of sentence vectors (snippets); None in a store made before it existed."""
        name = self.settings.collection + SNIPPETS_SUFFIX
        with self.errors(f"open collection {name!r}"):
            if create:
                col = self._client.get_or_create_collection(
                    name, embedding_function=None,
                    metadata={"embedding_model": self.model_name, "embedding_dimension": self.dimension})
                return self._keep_log_short(col)
            return self.existing_collection(name)

    def _keep_log_short(self, col):
        """`col`, made to have Chroma save its vector index every LOG_ENTRIES writes, so its log stays short
        (a store made before keeps Chroma's default until its next ingest). Only writers call this; if
        Chroma refuses, writes still work, only slower."""
        hnsw = (getattr(col, "configuration", None) or {}).get("hnsw") or {}
        if hnsw.get("sync_threshold", LOG_ENTRIES) <= LOG_ENTRIES:
            return col
        change = {"hnsw": {"sync_threshold": LOG_ENTRIES,
                           "batch_size": min(hnsw.get("batch_size", LOG_ENTRIES), LOG_ENTRIES)}}
        for attempt in range(LOG_CHANGE_ATTEMPTS):  # a busy SQLite file can refuse one change
            try:
                col.modify(configuration=change)
                # Read back: the modified object's own copy of the configuration names Chroma's default
                # embedding function, which it would then check on every write (what the store holds does not).
                fresh = self._client.get_collection(col.name, embedding_function=None)
                if ((fresh.configuration or {}).get("hnsw") or {}).get("sync_threshold") == LOG_ENTRIES:
                    return fresh
                log.debug("collection %r kept its log length after a change (attempt %d)", col.name, attempt + 1)
            except Exception:
                log.debug("could not shorten the log of collection %r (attempt %d)", col.name, attempt + 1,
                          exc_info=True)
            time.sleep(0.05 * (attempt + 1))
        log.info("collection %r keeps Chroma's longer write log: its writes work, only slower", col.name)
        return col

    def delete_collection(self, name: str) -> None:
        """Drop a collection of this store's Chroma (a companion collection of an older layout)."""
        self._client.delete_collection(name)

    def existing_collection(self, name: str):
        """The collection `name` of this store's Chroma, or None when there is none."""
        names = {getattr(c, "name", c) for c in self._client.list_collections()}
        return self._client.get_collection(name, embedding_function=None) if name in names else None

    @property
    def where(self) -> str:
        s = self.settings
        return f"{s.host}:{s.port}/{s.collection}" if s.is_server else f"{s.path} ({s.collection})"

    @contextmanager
    def errors(self, action: str) -> Iterator[None]:
        """Chroma's (and its HTTP client's) exceptions inside the block become one StoreError saying what
        failed while doing `action`, in words an admin can act on; paperbot's own errors pass through."""
        try:
            yield
        except PaperbotError:
            raise
        except Exception as exc:  # chromadb raises many types, some not exported
            raise self._wrap(exc, action) from None

    def _wrap(self, exc: Exception, action: str) -> StoreError:
        log.debug("store call failed: %s", action, exc_info=True)
        s = self.settings
        if self._child is not None and self._child.ended(within=CHILD_EXIT_GRACE):
            self._restart_child()
            return StoreRestartingError(
                f"the process serving the store at {s.path} stopped ({action}) and is being started again; "
                f"its output is in {self._child.log_path.with_name(PREVIOUS_LOG)}")
        if not s.is_server:
            return StoreError(f"the store at {s.path} failed ({action}: {type(exc).__name__}: {exc}). If it is "
                              "damaged, move it aside and run `paperbot ingest` to rebuild it.")
        return _server_error(s, exc, action)

    # -- a child that comes back -----------------------------------------------------

    @property
    def child_state(self) -> str | None:
        """"serving" or "restarting" for a store served by a child process; None for any other store."""
        if self._child is None:
            return None
        restarter = self._restarter
        return "restarting" if restarter is not None and restarter.is_alive() else "serving"

    def _restart_child(self) -> None:
        """Start bringing a dead child back, once (calls failing meanwhile raise StoreRestartingError)."""
        with self._restart_lock:
            if self._closed.is_set() or (self._restarter is not None and self._restarter.is_alive()):
                return
            self._restarter = threading.Thread(target=self._bring_back, daemon=True, name="paperbot-store-restart")
            self._restarter.start()

    def _bring_back(self) -> None:
        """Start the child again, waiting RESTART_WAITS between attempts (the last wait repeats), until it
        serves the store or the store is closed. Chroma's server keeps what it acknowledged (its SQLite log),
        so nothing written before the child died is lost."""
        old = self._child
        assert old is not None
        log.warning("the process serving the store at %s died (exit code %s); starting it again",
                    self.settings.path, old.exit_code())
        try:
            old.log_path.replace(old.log_path.with_name(PREVIOUS_LOG))
        except OSError:
            pass
        for attempt in itertools.count():
            if self._closed.wait(RESTART_WAITS[min(attempt, len(RESTART_WAITS) - 1)]):
                return
            try:
                child = ChromaChild(self.settings.path)
            except StoreError as exc:
                log.warning("the store's child process did not start again (attempt %d): %s", attempt + 1, exc)
                continue
            if self._closed.is_set():
                child.stop()
                return
            try:
                self._client = self._connect_server(replace(self.settings, host=ChromaChild.host, port=child.port,
                                                            ssl=False, auth_token=Secret("")))
                self._child = child
                self._collection = self._open_collection(False)
                self.snippets = SnippetRows(self, self._open_snippets(False))
            except StoreError as exc:
                log.warning("the store's new child process cannot be used (attempt %d): %s", attempt + 1, exc)
                child.stop()
                self._child = old
                continue
            self.child_restarts += 1
            log.warning("the store at %s is served again, by a new child process (pid %d, restart %d)",
                        self.settings.path, child.pid, self.child_restarts)
            return

    def close(self) -> None:
        self._closed.set()
        restarter = self._restarter
        if restarter is not None and restarter is not threading.current_thread():
            restarter.join(STOP_TIMEOUT + 5)
        if self._child is not None:
            self._child.stop()
            self._child = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading -----------------------------------------------------------------

    def _fresh_metadata(self) -> dict:
        """The collection metadata as stored now (another process may have changed it)."""
        with self.errors("read collection metadata"):
            col = self._client.get_collection(self.settings.collection, embedding_function=None)
        return dict(col.metadata or {})

    def content_version(self) -> str:
        """Changes whenever chunks are written or deleted (read fresh from the store)."""
        return str(self._fresh_metadata().get("content_version", "empty"))

    def count(self) -> int:
        with self.errors("count"):
            return self._collection.count()

    def iter_chunks(self, with_text: bool = True) -> Iterator[StoredChunk]:
        """Every stored chunk, paged so memory stays bounded on large stores (`with_text` False: the texts of
        chunks stored before records, in their documents, are not read).

        The next page is read while this one is consumed: Chroma reads without holding the
        GIL, so at 20,000 papers its reading and the caller's work overlap on two cores.
        """
        # A chunk's text is in its metadata; chunks stored before that hold it as their Chroma document.
        include = ["metadatas", "documents"] if with_text else ["metadatas"]

        def read(offset: int) -> dict:
            with self.errors("read chunks"):
                return self._collection.get(include=include, limit=PAGE, offset=offset)

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-read") as reader:
            offset = 0
            ahead = reader.submit(read, offset)
            while True:
                page = ahead.result()
                ids = page["ids"]
                if len(ids) == PAGE:
                    ahead = reader.submit(read, offset + PAGE)
                docs = page.get("documents") or [""] * len(ids)
                for cid, doc, meta in zip(ids, docs, page["metadatas"]):
                    yield StoredChunk.from_metadata(cid, doc or "", meta or {})
                if len(ids) < PAGE:
                    return
                offset += PAGE

    def get_embeddings(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these chunks, by id (ids not in the store are absent), read in pages."""
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), PAGE):
            with self.errors("get embeddings"):
                page = self._collection.get(ids=ids[start:start + PAGE], include=["embeddings"])
            out.update(zip(page["ids"], (np.asarray(v, dtype=np.float32) for v in page["embeddings"])))
        return out

    def query(self, vector, n: int) -> list[tuple[str, float]]:
        """Nearest chunks to a unit vector: (chunk id, cosine similarity), best first.

        Asks for `n` directly (Chroma 1.x returns fewer when it holds fewer): a count first would
        be one more call that holds the GIL, and waits behind an ingest's writes while doing so.
        """
        embedding = [list(map(float, vector))]
        try:
            res = self._collection.query(query_embeddings=embedding, n_results=n, include=["distances"])
        except Exception:
            total = self.count()  # a server that refuses more results than it holds
            if total == 0:
                return []
            with self.errors("query"):
                res = self._collection.query(query_embeddings=embedding, n_results=min(n, total),
                                             include=["distances"])
        return [(cid, 1.0 - float(d)) for cid, d in zip(res["ids"][0], res["distances"][0])]

    # -- writing -----------------------------------------------------------------

    @property
    def in_process(self) -> bool:
        """True when Chroma runs in this process (embedded, no child): its write calls then hold the GIL."""
        return not self.settings.is_server and self._child is None

    @property
    def _paced(self) -> bool:
        """Write calls small and paused between: a serving process whose Chroma holds the GIL while it writes."""
        return self.in_process and self.writes is Writes.SHARED

    def max_batch(self) -> int:
        """Rows per write call: WRITE_BATCH (SHARED_WRITE_BATCH in a serving process whose Chroma holds the
        GIL), or less when the server takes less."""
        rows = SHARED_WRITE_BATCH if self._paced else WRITE_BATCH
        try:
            return max(1, min(int(self._client.get_max_batch_size()), rows))
        except Exception:
            return rows

    def write_offsets(self, n: int) -> Iterator[int]:
        """Start offsets of the write calls for `n` rows, with a short pause between calls in a serving process
        whose Chroma holds the GIL (see WRITE_BATCH). Alone, the embedded store's own threads stay on one core
        until the last call returns (`ingest.cores`); a serving process's are left where they are."""
        step = self.max_batch()
        alone = self.writes is Writes.ALONE
        with on_one_core() if alone and self.in_process else nullcontext():
            for i in range(0, n, step):
                if i and self._paced:  # alone (`paperbot ingest`) or over HTTP, nobody waits
                    time.sleep(WRITE_PAUSE)
                yield i

    def upsert(self, ids: list[str], embeddings, metadatas: list[dict]) -> None:
        """Write chunks: their vectors and metadata (which holds their text: `records.chunk_metadata`)."""
        step = self.max_batch()
        for i in self.write_offsets(len(ids)):
            with self.errors("write chunks"):
                self._collection.upsert(ids=ids[i:i + step], embeddings=embeddings[i:i + step],
                                        metadatas=metadatas[i:i + step])

    def update_metadata(self, ids: list[str], metadatas: list[dict]) -> None:
        step = self.max_batch()
        for i in self.write_offsets(len(ids)):
            with self.errors("update metadata"):
                self._collection.update(ids=ids[i:i + step], metadatas=metadatas[i:i + step])

    def delete(self, ids: list[str]) -> None:
        step = self.max_batch()
        for i in self.write_offsets(len(ids)):
            with self.errors("delete chunks"):
                self._collection.delete(ids=ids[i:i + step])

    def write_in_progress(self) -> bool:
        """True when the last ingest that started writing never finished (it was killed)."""
        return self._fresh_metadata().get("ingest_state") == "writing"

    def bump_version(self, writing: bool = False) -> str:
        """Record that the content changed (or, with `writing`, is about to); returns the new version."""
        version = f"{time.time_ns():x}-{uuid.uuid4().hex[:8]}"
        meta = dict(self._collection.metadata or {})
        meta.pop("hnsw:space", None)  # fixed at creation; Chroma refuses to change it
        meta["content_version"] = version
        meta["ingest_state"] = "writing" if writing else "done"
        meta["schema_version"] = SCHEMA_VERSION
        with self.errors("update collection metadata"):
            self._collection.modify(metadata=meta)
        return version


def _server_url(s: StoreSettings) -> str:
    return f"{'https' if s.ssl else 'http'}://{s.host}:{s.port}"


def _server_error(s: StoreSettings, exc: Exception, action: str) -> StoreError:
    """Say what went wrong with the server in words an admin can act on."""
    import httpx
    from chromadb.errors import AuthorizationError, ChromaAuthError, ChromaError

    where = f"the Chroma server at {_server_url(s)}"
    if isinstance(exc, httpx.TimeoutException):
        return StoreUnavailableError(f"{where} did not answer within CHROMA_TIMEOUT={s.timeout:g}s ({action}); "
                                     "is it overloaded or stuck? Raise CHROMA_TIMEOUT for slow servers.")
    if isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        return StoreUnavailableError(f"cannot reach {where} ({action}: {type(exc).__name__}); "
                                     "is `chroma run` up, and are CHROMA_HOST/CHROMA_PORT/CHROMA_SSL right?")
    if isinstance(exc, (AuthorizationError, ChromaAuthError)):
        return StoreError(f"{where} refused the credentials ({action}); check CHROMA_AUTH_TOKEN")
    if isinstance(exc, ChromaError):
        return StoreError(f"{where} rejected the request ({action}: {type(exc).__name__}: {exc})")
    return StoreUnavailableError(f"{where} failed ({action}: {type(exc).__name__}: {exc})")


def _check_heartbeat(s: StoreSettings, headers: dict[str, str] | None) -> None:
    """Fail within CHROMA_TIMEOUT, with a message that says why, when the server is not usable."""
    import httpx

    url = f"{_server_url(s)}/api/v2/heartbeat"
    try:
        resp = httpx.get(url, headers=headers, timeout=s.timeout)
    except httpx.HTTPError as exc:
        log.debug("heartbeat to %s failed", url, exc_info=True)
        raise _server_error(s, exc, "heartbeat") from None
    if resp.status_code in (401, 403):
        raise StoreError(f"the Chroma server at {_server_url(s)} refused the credentials "
                         f"(HTTP {resp.status_code}); check CHROMA_AUTH_TOKEN")
    if resp.status_code != 200:
        raise StoreUnavailableError(f"{url} answered HTTP {resp.status_code}; is CHROMA_HOST/CHROMA_PORT a "
                                    "Chroma 1.x server?")


def _bound_requests(client, timeout: float) -> None:
    """Apply CHROMA_TIMEOUT to the HTTP session inside Chroma's client (it has no setting for it)."""
    import httpx

    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(timeout)
    else:
        log.warning("this chromadb version hides its HTTP session; CHROMA_TIMEOUT applies only to connecting")


def folder_problem(path: Path) -> str | None:
    """Why `path` can never be the store's folder (it, or a folder above it, is a file), or None."""
    blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
    return f"{blocker} is a file, not a folder" if blocker is not None else None


def _acquire_lock(path: Path):
    from filelock import FileLock, Timeout

    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError("CHROMA_PATH", f"cannot create the store folder {path} "
                          f"({folder_problem(path) or exc.strerror or exc}); set it to a folder paperbot may "
                          "create and write") from None
    lock = FileLock(str(path / LOCK_NAME))
    try:
        lock.acquire(timeout=0.5)
    except Timeout:
        raise StoreLockedError(
            f"the store at {path} is in use by another paperbot process. An embedded store serves one process "
            "at a time: stop the other one, or run a Chroma server (`chroma run --path DIR`) and set CHROMA_HOST "
            "so that several processes can share it.") from None
    except OSError as exc:  # after Timeout, which is one
        raise ConfigError("CHROMA_PATH", f"cannot write in the store folder {path} ({exc.strerror or exc}); set "
                          "it to a folder paperbot may write") from None
    return lock
