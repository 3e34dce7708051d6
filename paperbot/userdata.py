"""What paperbot keeps per user: saved papers and watches, in one SQLite file beside the store.

    UserData(path)         opens (and migrates) the file; every call uses its own connection, so threads
                           and processes (the bot, `paperbot chat`) can write at once
    save / unsave / saved / clear_saved / forget_user     a user's saved papers, and deleting all of a user's data
    add_watch / watches / remove_watch                    topics whose new papers are sent as digests
    queue / due / mark_sent                               the digest bookkeeping (never the same paper twice)
    changed_papers                                        which papers an ingest added or changed since last seen
    check / inspect                                       integrity and counts (`paperbot doctor`, read-only)

The file is in WAL mode (readers never wait for a writer); writes take the write lock up front
(BEGIN IMMEDIATE) and wait for it up to `TIMEOUT` seconds. The schema version is `PRAGMA user_version`;
`MIGRATIONS[n]` takes a file from version n to n + 1, so an older file is upgraded in place on open.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from paperbot.errors import UserDataError

log = logging.getLogger(__name__)

TIMEOUT = 30.0  # seconds a write waits for another writer
MAX_SAVED = 1000  # papers per user
MAX_WATCHES = 10  # watches per user
MAX_TOPIC = 200  # characters

MIGRATIONS = (
    """
    CREATE TABLE saved (
        user_id TEXT NOT NULL, paper_id TEXT NOT NULL, saved_at REAL NOT NULL,
        PRIMARY KEY (user_id, paper_id));
    CREATE TABLE watches (
        id INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL, topic TEXT NOT NULL,
        channel_id TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL, last_digest REAL NOT NULL DEFAULT 0);
    CREATE INDEX watches_user ON watches (user_id);
    CREATE TABLE watch_sent (
        watch_id INTEGER NOT NULL REFERENCES watches (id) ON DELETE CASCADE, paper_id TEXT NOT NULL,
        sent_at REAL NOT NULL, PRIMARY KEY (watch_id, paper_id));
    CREATE TABLE watch_pending (
        watch_id INTEGER NOT NULL REFERENCES watches (id) ON DELETE CASCADE, paper_id TEXT NOT NULL,
        score REAL NOT NULL, PRIMARY KEY (watch_id, paper_id));
    CREATE TABLE known_papers (paper_id TEXT PRIMARY KEY, version TEXT NOT NULL);
    CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
)
VERSION = len(MIGRATIONS)


@dataclass(frozen=True)
class Watch:
    id: int
    user_id: str
    topic: str
    channel_id: str = ""  # "" sends the digest by DM; else the channel an admin pointed it at
    last_digest: float = 0.0


@dataclass(frozen=True)
class Check:
    path: Path
    version: int
    users: int
    saved: int
    watches: int
    journal: str


class UserData:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute("PRAGMA journal_mode=WAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise UserDataError(f"{self.path}: not a usable paperbot users file ({exc})") from None
        except OSError as exc:
            raise UserDataError(f"{self.path}: cannot open the users file ({exc.strerror or exc})") from None

    # -- connections --------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=TIMEOUT, isolation_level=None)
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA synchronous=NORMAL")  # safe in WAL mode: a crash loses at most the last commit
        return db

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        db = self._connect()
        try:
            yield db
        except sqlite3.DatabaseError as exc:
            raise UserDataError(f"{self.path}: cannot read the users file ({exc})") from None
        finally:
            db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One transaction holding the write lock from its start (no upgrade deadlock between writers)."""
        db = self._connect()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise UserDataError(f"{self.path}: cannot write the users file ({exc})") from None
        finally:
            db.close()

    def _migrate(self) -> None:
        with self._write() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > VERSION:
                raise UserDataError(f"{self.path}: written by a newer paperbot (schema {version}, this one "
                                    f"knows {VERSION}); upgrade paperbot")
            for n in range(version, VERSION):
                for statement in filter(str.strip, MIGRATIONS[n].split(";")):
                    db.execute(statement)
                log.info("users file %s migrated to schema %d", self.path, n + 1)
            if version != VERSION:
                db.execute(f"PRAGMA user_version={VERSION}")

    # -- saved papers -----------------------------------------------------------------------------

    def save(self, user_id: str | int, paper_ids: Iterable[str]) -> int:
        """Save papers for a user (already saved ones stay as they are); returns how many were new."""
        ids = list(dict.fromkeys(paper_ids))
        now = time.time()
        with self._write() as db:
            have = db.execute("SELECT COUNT(*) FROM saved WHERE user_id = ?", (str(user_id),)).fetchone()[0]
            before = db.total_changes
            for i, pid in enumerate(ids):
                db.execute("INSERT OR IGNORE INTO saved VALUES (?, ?, ?)", (str(user_id), pid, now + i * 1e-6))
            added = db.total_changes - before
            if have + added > MAX_SAVED:
                raise UserDataError(f"at most {MAX_SAVED} saved papers; remove some first")
        return added

    def saved(self, user_id: str | int) -> list[str]:
        """The user's saved paper ids, oldest first."""
        with self._read() as db:
            rows = db.execute("SELECT paper_id FROM saved WHERE user_id = ? ORDER BY saved_at, paper_id",
                              (str(user_id),)).fetchall()
        return [r[0] for r in rows]

    def unsave(self, user_id: str | int, paper_id: str) -> bool:
        with self._write() as db:
            return db.execute("DELETE FROM saved WHERE user_id = ? AND paper_id = ?",
                              (str(user_id), paper_id)).rowcount > 0

    def clear_saved(self, user_id: str | int) -> int:
        with self._write() as db:
            return db.execute("DELETE FROM saved WHERE user_id = ?", (str(user_id),)).rowcount

    def forget_user(self, user_id: str | int) -> tuple[int, int]:
        """Delete everything kept about a user: (saved papers, watches) deleted."""
        with self._write() as db:
            saved = db.execute("DELETE FROM saved WHERE user_id = ?", (str(user_id),)).rowcount
            watches = db.execute("DELETE FROM watches WHERE user_id = ?", (str(user_id),)).rowcount
        return saved, watches

    # -- watches -------------------------------------------------------------------------------------

    def add_watch(self, user_id: str | int, topic: str, channel_id: str | int = "") -> Watch:
        topic = " ".join(topic.split())
        if not topic or len(topic) > MAX_TOPIC:
            raise UserDataError(f"a watch's topic is 1 to {MAX_TOPIC} characters")
        with self._write() as db:
            have = db.execute("SELECT COUNT(*) FROM watches WHERE user_id = ?", (str(user_id),)).fetchone()[0]
            if have >= MAX_WATCHES:
                raise UserDataError(f"at most {MAX_WATCHES} watches; remove one first")
            cur = db.execute("INSERT INTO watches (user_id, topic, channel_id, created_at) VALUES (?, ?, ?, ?)",
                             (str(user_id), topic, str(channel_id or ""), time.time()))
            wid = cur.lastrowid
        if wid is None:  # sqlite3 sets it after every INSERT
            raise UserDataError("the watch was not stored")
        return Watch(id=int(wid), user_id=str(user_id), topic=topic, channel_id=str(channel_id or ""))

    def watches(self, user_id: str | int | None = None) -> list[Watch]:
        """A user's watches (every watch when `user_id` is None), oldest first."""
        query = "SELECT id, user_id, topic, channel_id, last_digest FROM watches"
        args: tuple = ()
        if user_id is not None:
            query += " WHERE user_id = ?"
            args = (str(user_id),)
        with self._read() as db:
            rows = db.execute(query + " ORDER BY id", args).fetchall()
        return [Watch(id=r[0], user_id=r[1], topic=r[2], channel_id=r[3], last_digest=r[4]) for r in rows]

    def remove_watch(self, user_id: str | int, watch_id: int) -> bool:
        with self._write() as db:
            return db.execute("DELETE FROM watches WHERE id = ? AND user_id = ?",
                              (int(watch_id), str(user_id))).rowcount > 0

    # -- digests ---------------------------------------------------------------------------------------

    def queue(self, watch_id: int, scored: Mapping[str, float]) -> int:
        """Queue matching papers for a watch's next digest, except those it was already sent."""
        with self._write() as db:
            before = db.total_changes
            for pid, score in scored.items():
                if db.execute("SELECT 1 FROM watch_sent WHERE watch_id = ? AND paper_id = ?",
                              (watch_id, pid)).fetchone() is None:
                    db.execute("INSERT INTO watch_pending VALUES (?, ?, ?) ON CONFLICT (watch_id, paper_id) "
                               "DO UPDATE SET score = MAX(score, excluded.score)", (watch_id, pid, score))
            return db.total_changes - before

    def due(self, interval: float, now: float | None = None) -> list[tuple[Watch, list[tuple[str, float]]]]:
        """Watches with queued papers whose last digest is at least `interval` seconds old, papers best first."""
        now = time.time() if now is None else now
        out = []
        for watch in self.watches():
            if now - watch.last_digest < interval:
                continue
            with self._read() as db:
                rows = db.execute("SELECT paper_id, score FROM watch_pending WHERE watch_id = ? "
                                  "ORDER BY score DESC, paper_id", (watch.id,)).fetchall()
            if rows:
                out.append((watch, [(r[0], r[1]) for r in rows]))
        return out

    def mark_sent(self, watch_id: int, paper_ids: Iterable[str], now: float | None = None) -> None:
        """A digest went out: its papers are never sent again by this watch, and the queue is emptied."""
        now = time.time() if now is None else now
        with self._write() as db:
            for pid in paper_ids:
                db.execute("INSERT OR IGNORE INTO watch_sent VALUES (?, ?, ?)", (watch_id, pid, now))
            db.execute("DELETE FROM watch_pending WHERE watch_id = ?", (watch_id,))
            db.execute("UPDATE watches SET last_digest = ? WHERE id = ?", (now, watch_id))

    def drop_pending(self, watch_id: int) -> None:
        with self._write() as db:
            db.execute("DELETE FROM watch_pending WHERE watch_id = ?", (watch_id,))

    def changed_papers(self, versions: Mapping[str, str]) -> list[str] | None:
        """Papers added or changed since the last call (`versions`: paper id → its version), and remember these.

        None on the first call (nothing is known yet: every paper would look new, so none is announced).
        """
        with self._write() as db:
            known = dict(db.execute("SELECT paper_id, version FROM known_papers").fetchall())
            seeded = db.execute("SELECT value FROM state WHERE key = 'known_seeded'").fetchone() is not None
            changed = [pid for pid, v in versions.items() if known.get(pid) != v]
            gone = [pid for pid in known if pid not in versions]
            db.executemany("INSERT OR REPLACE INTO known_papers VALUES (?, ?)",
                           [(pid, versions[pid]) for pid in changed])
            db.executemany("DELETE FROM known_papers WHERE paper_id = ?", [(pid,) for pid in gone])
            db.execute("INSERT OR REPLACE INTO state VALUES ('known_seeded', '1')")
        return changed if seeded else None

    # -- health ------------------------------------------------------------------------------------------

    def check(self) -> Check:
        """Integrity and counts (UserDataError when the file is damaged)."""
        return inspect(self.path)


def inspect(path: Path) -> Check:
    """Integrity, schema version and counts of a users file, read-only (what `paperbot doctor` reports)."""
    try:
        db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=TIMEOUT)
    except sqlite3.Error as exc:
        raise UserDataError(f"{path}: cannot open the users file ({exc})") from None
    try:
        result = db.execute("PRAGMA quick_check").fetchone()[0]
        if result != "ok":
            raise UserDataError(f"{path}: damaged ({result})")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > VERSION:
            raise UserDataError(f"{path}: written by a newer paperbot (schema {version}, this one knows {VERSION})")
        if version < 1:
            return Check(path=Path(path), version=version, users=0, saved=0, watches=0,
                         journal=db.execute("PRAGMA journal_mode").fetchone()[0])
        return Check(path=Path(path), version=version,
                     users=db.execute("SELECT COUNT(DISTINCT user_id) FROM (SELECT user_id FROM saved "
                                      "UNION SELECT user_id FROM watches)").fetchone()[0],
                     saved=db.execute("SELECT COUNT(*) FROM saved").fetchone()[0],
                     watches=db.execute("SELECT COUNT(*) FROM watches").fetchone()[0],
                     journal=db.execute("PRAGMA journal_mode").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise UserDataError(f"{path}: not a usable paperbot users file ({exc})") from None
    finally:
        db.close()
