"""The users' data: saved papers and watches, in SQLite (WAL) and in PostgreSQL, with the same tests against both
(the `users_db` fixture); migrations, concurrent writers and processes, digest claims, damage."""

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


@pytest.fixture
def users(users_db):
    data = UserData(users_db)
    yield data
    data.close()


def test_a_new_database_is_migrated(users, users_db):
    check = users.check()
    assert (check.version, check.saved, check.watches) == (VERSION, 0, 0)
    assert check.journal == "wal" if isinstance(users_db, Path) else check.journal.startswith("postgresql ")
    again = UserData(users_db)  # reopening migrates nothing
    assert again.check().version == VERSION
    again.close()


def test_a_schema_1_file_keeps_its_watches_when_it_gains_server_libraries(tmp_path):
    from paperbot.userdata import MIGRATIONS, statements

    path = tmp_path / "users.sqlite3"  # a file written by the version before server libraries
    old = sqlite3.connect(path)
    old.executescript(";".join(statements(MIGRATIONS[0], "sqlite")) + ";PRAGMA user_version=1;")
    old.execute("INSERT INTO watches (user_id, topic, created_at) VALUES ('7', 'diffusion', 1.0)")
    old.commit()
    old.close()
    users = UserData(path)
    try:
        assert users.check().version == VERSION == 2
        [watch] = users.watches()
        assert (watch.user_id, watch.topic, watch.server) == ("7", "diffusion", "")
    finally:
        users.close()


def test_server_library_records_and_dm_settings(users):
    users.record_upload("42", "lab.jsonl", 7, 120)
    users.record_upload("42", "notes.csv", 8, 3)
    users.record_upload("42", "lab.jsonl", 9, 80)  # uploaded again: the latest uploader and count
    users.record_upload("43", "lab.jsonl", 7, 1)
    assert [(u.name, u.user_id, u.papers) for u in users.uploads("42")] == [("lab.jsonl", "9", 80),
                                                                            ("notes.csv", "8", 3)]
    assert users.forget_upload("42", "notes.csv") and not users.forget_upload("42", "notes.csv")
    assert [u.name for u in users.uploads("43")] == ["lab.jsonl"]
    assert users.in_dms() == set()
    users.set_in_dms("42", True)
    users.set_in_dms("43", True)
    users.set_in_dms("43", False)
    assert users.in_dms() == {"42"}
    w = users.add_watch(7, "origami", library="42")
    assert [x.server for x in users.watches(7)] == ["42"] and w.server == "42"


def test_saved_papers_keep_their_order_and_survive_reopening(users, users_db):
    assert users.save(1, ["b", "a", "b"]) == 2
    assert users.save(1, ["a", "c"]) == 1
    assert users.save("2", ["a"]) == 1
    again = UserData(users_db)
    assert again.saved(1) == ["b", "a", "c"] and again.saved(2) == ["a"]
    assert again.unsave(1, "a") and not again.unsave(1, "a")
    assert again.clear_saved(1) == 2 and again.saved(1) == [] and again.saved(2) == ["a"]
    assert again.check().users == 1
    again.close()


def test_forgetting_a_user_deletes_their_papers_watches_and_digest_records(users):
    users.save(1, ["a", "b"])
    w = users.add_watch(1, "  diffusion   policies ")
    users.add_watch(2, "other")
    users.mark_sent(w.id, ["a"])
    users.record_upload("42", "lab.jsonl", 1, 3)
    assert w.topic == "diffusion policies"
    assert users.forget_user(1) == (2, 1)
    assert users.saved(1) == [] and [x.user_id for x in users.watches()] == ["2"]
    [upload] = users.uploads("42")
    assert (upload.name, upload.user_id, upload.papers) == ("lab.jsonl", "", 3)  # the server's, unnamed
    with users.db.read() as tx:  # the watch's records went with it (ON DELETE CASCADE)
        assert tx.one("SELECT COUNT(*) FROM watch_sent") == (0,)


def test_watch_limits_are_one_line_errors(users):
    for i in range(MAX_WATCHES):
        users.add_watch(1, f"topic {i}")
    with pytest.raises(UserDataError, match="at most 10 watches"):
        users.add_watch(1, "one more")
    with pytest.raises(UserDataError, match="1 to 200 characters"):
        users.add_watch(2, "x" * 201)
    assert len(users.watches(1)) == MAX_WATCHES and users.watches(2) == []  # nothing half-written


def test_digests_never_repeat_a_paper_and_wait_for_their_interval(users):
    w = users.add_watch(1, "t")
    assert users.changed_papers({"a": "1", "b": "1"}) is None  # the first look: nothing is "new"
    assert users.changed_papers({"a": "1", "b": "2", "c": "1"}) == ["b", "c"]
    assert users.changed_papers({"a": "1", "b": "2", "c": "1"}) == []
    assert users.changed_papers({"a": "1", "c": "1"}) == []  # b left: forgotten, so its return is news
    assert users.changed_papers({"a": "1", "b": "2", "c": "1"}) == ["b"]
    users.queue(w.id, {"b": 0.5, "c": 0.9})
    assert users.queue(w.id, {"b": 0.2}) == 1  # queued again: the better score stays
    [(watch, pending)] = users.due(600, now=10_000)
    assert watch.id == w.id and pending == [("c", 0.9), ("b", 0.5)]
    users.mark_sent(w.id, ["c", "b"], now=10_000)
    assert users.queue(w.id, {"b": 0.7, "d": 0.3}) == 1  # b was sent already
    assert users.due(600, now=10_100) == []  # too soon after the last digest
    assert users.due(600, now=10_700)[0][1] == [("d", 0.3)]


def test_a_due_digest_is_claimed_once_and_a_released_claim_is_due_again(users):
    w = users.add_watch(1, "t")
    users.add_watch(2, "nothing queued")
    users.queue(w.id, {"a": 0.5})
    [claim] = users.claim_due(600, limit=5, now=10_000)
    assert (claim.watch.id, claim.pending, claim.previous) == (w.id, [("a", 0.5)], 0.0)
    assert users.claim_due(600, limit=5, now=10_001) == []  # claimed: another process finds nothing due
    users.release(claim)  # Discord could not be reached
    [again] = users.claim_due(600, limit=5, now=10_002)
    assert again.pending == [("a", 0.5)]
    users.mark_sent(w.id, ["a"], now=10_003)
    users.queue(w.id, {"b": 0.4})
    assert users.claim_due(600, limit=5, now=10_500) == []  # the interval runs from the digest sent
    assert [c.pending for c in users.claim_due(600, limit=5, now=10_700)] == [[("b", 0.4)]]


def test_of_threads_claiming_at_once_one_gets_each_digest(users):
    watches = [users.add_watch(u, "t") for u in range(8)]
    for w in watches:
        users.queue(w.id, {"a": 0.5})
    got: list[int] = []
    errors: list[BaseException] = []

    def claim() -> None:
        try:
            got.extend(c.watch.id for c in users.claim_due(600, limit=50, now=10_000))
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=claim) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(got) == sorted(w.id for w in watches)


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


def test_a_postgresql_database_from_a_newer_version_is_refused(postgres):
    import psycopg

    url = postgres.new_database()
    UserData(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE paperbot_schema SET version = %s", (VERSION + 1,))
    with pytest.raises(UserDataError, match="written by a newer paperbot"):
        UserData(url)


def test_an_unreachable_postgresql_is_one_line_without_the_password(postgres, monkeypatch):
    import paperbot.userdata as userdata

    monkeypatch.setattr(userdata, "TIMEOUT", 2.0)
    url = f"postgresql://paperbot:hunter2@127.0.0.1:{postgres.port}/no_such_database"
    with pytest.raises(UserDataError) as err:
        UserData(url)
    message = str(err.value)
    assert "hunter2" not in message and "\n" not in message
    assert message.startswith(f"postgresql://paperbot@127.0.0.1:{postgres.port}/no_such_database: cannot connect")


def test_threads_saving_at_once_lose_nothing(users):
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
from paperbot.userdata import UserData

target = sys.argv[1]
users = UserData(target if "://" in target else __import__("pathlib").Path(target))
for i in range(60):
    users.save(sys.argv[2], [f"p{i}"])
users.close()
"""


def test_processes_saving_at_once_lose_nothing(users, users_db):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(users_db), str(u)], cwd=REPO,
                              env={"PYTHONPATH": str(REPO)}, stderr=subprocess.PIPE, text=True) for u in range(3)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    assert [len(users.saved(u)) for u in range(3)] == [60, 60, 60]
