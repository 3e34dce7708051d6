"""The users file: saved papers and watches in SQLite (WAL), migrations, concurrent writers, damage."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from paperbot.errors import UserDataError
from paperbot.userdata import MAX_WATCHES, VERSION, UserData

REPO = Path(__file__).resolve().parents[2]


def test_a_new_file_is_migrated_in_wal_mode(tmp_path):
    users = UserData(tmp_path / "u.sqlite3")
    check = users.check()
    assert (check.version, check.journal, check.saved, check.watches) == (VERSION, "wal", 0, 0)
    assert UserData(tmp_path / "u.sqlite3").check().version == VERSION  # reopening migrates nothing


def test_saved_papers_keep_their_order_and_survive_reopening(tmp_path):
    path = tmp_path / "u.sqlite3"
    users = UserData(path)
    assert users.save(1, ["b", "a", "b"]) == 2
    assert users.save(1, ["a", "c"]) == 1
    assert users.save("2", ["a"]) == 1
    again = UserData(path)
    assert again.saved(1) == ["b", "a", "c"] and again.saved(2) == ["a"]
    assert again.unsave(1, "a") and not again.unsave(1, "a")
    assert again.clear_saved(1) == 2 and again.saved(1) == [] and again.saved(2) == ["a"]


def test_forgetting_a_user_deletes_their_papers_watches_and_digest_records(tmp_path):
    users = UserData(tmp_path / "u.sqlite3")
    users.save(1, ["a", "b"])
    w = users.add_watch(1, "  diffusion   policies ")
    users.add_watch(2, "other")
    users.mark_sent(w.id, ["a"])
    assert w.topic == "diffusion policies"
    assert users.forget_user(1) == (2, 1)
    assert users.saved(1) == [] and [x.user_id for x in users.watches()] == ["2"]
    with sqlite3.connect(tmp_path / "u.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM watch_sent").fetchone()[0] == 0


def test_watch_limits_are_one_line_errors(tmp_path):
    users = UserData(tmp_path / "u.sqlite3")
    for i in range(MAX_WATCHES):
        users.add_watch(1, f"topic {i}")
    with pytest.raises(UserDataError, match="at most 10 watches"):
        users.add_watch(1, "one more")
    with pytest.raises(UserDataError, match="1 to 200 characters"):
        users.add_watch(2, "x" * 201)


def test_digests_never_repeat_a_paper_and_wait_for_their_interval(tmp_path):
    users = UserData(tmp_path / "u.sqlite3")
    w = users.add_watch(1, "t")
    assert users.changed_papers({"a": "1", "b": "1"}) is None  # the first look: nothing is "new"
    assert users.changed_papers({"a": "1", "b": "2", "c": "1"}) == ["b", "c"]
    assert users.changed_papers({"a": "1", "b": "2", "c": "1"}) == []
    users.queue(w.id, {"b": 0.5, "c": 0.9})
    [(watch, pending)] = users.due(600, now=10_000)
    assert watch.id == w.id and pending == [("c", 0.9), ("b", 0.5)]
    users.mark_sent(w.id, ["c", "b"], now=10_000)
    assert users.queue(w.id, {"b": 0.7, "d": 0.3}) == 1  # b was sent already
    assert users.due(600, now=10_100) == []  # too soon after the last digest
    assert users.due(600, now=10_700)[0][1] == [("d", 0.3)]


def test_a_file_from_a_newer_version_or_damaged_is_refused_in_one_line(tmp_path):
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as db:
        db.execute(f"PRAGMA user_version={VERSION + 1}")
    with pytest.raises(UserDataError, match="written by a newer paperbot"):
        UserData(newer)
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(UserDataError) as err:
        UserData(junk)
    assert str(junk) in str(err.value) and "\n" not in str(err.value)


def test_threads_saving_at_once_lose_nothing(tmp_path):
    users = UserData(tmp_path / "u.sqlite3")
    errors: list[BaseException] = []

    def work(user: int) -> None:
        try:
            for i in range(40):
                users.save(user, [f"p{i}"])
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(u,)) for u in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(users.saved(u) == [f"p{i}" for i in range(40)] for u in range(6))


WRITER = """
import sys
from pathlib import Path
from paperbot.userdata import UserData

users = UserData(Path(sys.argv[1]))
for i in range(60):
    users.save(sys.argv[2], [f"p{i}"])
"""


def test_processes_saving_at_once_lose_nothing(tmp_path):
    path = tmp_path / "u.sqlite3"
    UserData(path)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(u)], cwd=REPO,
                              env={"PYTHONPATH": str(REPO)}, stderr=subprocess.PIPE, text=True) for u in range(3)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    users = UserData(path)
    assert [len(users.saved(u)) for u in range(3)] == [60, 60, 60]
