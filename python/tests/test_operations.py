"""The operations from Python: one handle shared by many threads, bad input
(nothing written), and the database's own errors as exceptions."""

import threading

import pytest

import nodemaint
from nodemaint import Caller, Maintenance

from conftest import OWNER, make_database, nodemaint as cli

OPERATOR = Caller.system("op-admin", ["admin"])
THREADS, ROUNDS = 8, 6


def test_one_handle_from_many_threads_at_once(db):
    """Eight threads assert and release on four nodes through one handle
    (two threads per node, so they contend for its lock): no deadlock, no
    lost or doubled change, the boolean and history in step."""
    nodes = [f"t-{i}" for i in range(4)]
    for name in nodes:
        cli(db.url, "node", "create", "--name", name, "--owner", OWNER)
    m = Maintenance(db.url, max_connections=4)
    failures, done = [], []

    def work(i):
        node = nodes[i // 2]  # two threads per node, at different scopes (same scope: a 409)
        caller = Caller.project(f"user-{i}", OWNER, ["member"]) if i % 2 else OPERATOR
        try:
            for r in range(ROUNDS):
                entry = m.add(caller, node, "operator_hold", reason=f"thread {i} round {r}")
                assert entry["asserted_by"] == caller.user_id
                seen = [e["uuid"] for e in m.list(OPERATOR, node)]
                assert entry["uuid"] in seen
                assert m.remove(caller, node, entry["uuid"])["uuid"] == entry["uuid"]
            done.append(i)
        except Exception as e:  # reported below, with the thread's number
            failures.append((i, repr(e)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (deadlock?)"
    assert failures == []
    assert sorted(done) == list(range(THREADS))
    assert db.count("SELECT COUNT(*) FROM node_maintenance") == 0
    assert db.count("SELECT COUNT(*) FROM nodes WHERE maintenance = TRUE OR maintenance_reason IS NOT NULL") == 0
    assert db.count("SELECT COUNT(*) FROM node_history") == THREADS * ROUNDS * 2
    m.close()


HOLD_LOCK = """
import sys, time
backend, url, path = sys.argv[1:4]
if backend == "sqlite":
    import sqlite3
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("BEGIN IMMEDIATE")
elif backend == "postgres":
    import psycopg
    c = psycopg.connect(url)
    c.execute("SELECT id FROM nodes WHERE name = 'myNode' FOR UPDATE")
else:
    sys.path.insert(0, sys.argv[4])
    from conftest import mysql_connect
    c = mysql_connect(sys.argv[5], database=sys.argv[6])
    c.autocommit(False)
    c.cursor().execute("SELECT id FROM nodes WHERE name = 'myNode' FOR UPDATE")
print("locked", flush=True)
time.sleep(float(sys.argv[-1]))
c.rollback()
"""


def test_the_gil_is_released_while_a_call_waits_on_the_database(db):
    """Another process holds myNode's lock for 1.5 s; a thread's assert
    waits for it. The interpreter keeps running meanwhile: the main
    thread is never stalled for long, so the call released the GIL."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    m = Maintenance(db.url)
    here = str(Path(__file__).parent)
    args = [db.backend, db.url, db.path or "", here, db.admin_url or "", db.name, "1.5"]
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, *args], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    started = time.monotonic()
    worker = threading.Thread(target=lambda: m.add(OPERATOR, "myNode", "operator_hold", reason="after the lock"))
    worker.start()
    longest, last = 0.0, time.monotonic()
    while worker.is_alive():
        now = time.monotonic()
        longest, last = max(longest, now - last), now
        time.sleep(0.001)
    waited = time.monotonic() - started
    holder.wait(timeout=30)
    assert waited > 1.0, f"the call did not wait on the lock ({waited:.2f} s)"
    assert longest < 0.25, f"the main thread was stalled {longest:.2f} s: the GIL was held"
    assert db.legacy_view("myNode") == (True, "operator_hold: after the lock")
    m.close()


def test_bad_input_raises_the_right_exception_and_writes_nothing(db):
    m = Maintenance(db.url)
    before = db.count("SELECT COUNT(*) FROM node_history")
    cases = [
        (lambda: m.add(OPERATOR, "myNode", "no_such_type"), nodemaint.BadRequest, "no_such_type"),
        (lambda: m.add(OPERATOR, "myNode", "legacy"), nodemaint.BadRequest, "legacy"),
        (lambda: m.add(OPERATOR, "myNode", "operator_hold", extra=[1, 2]), TypeError, "extra must be a dict"),
        (lambda: m.add(OPERATOR, "myNode", "operator_hold", ends_at="soon"), ValueError, "ends_at"),
        (lambda: m.add(OPERATOR, "myNode", "operator_hold", reason="x", ends_at="-1h"), nodemaint.BadRequest, "not in the future"),
        (lambda: m.add(OPERATOR, "myNode", "operator_hold", reason="x" * 16_001), nodemaint.BadRequest, "reason"),
        (lambda: m.add("op-admin", "myNode", "operator_hold"), TypeError, "caller"),
        (lambda: m.add(OPERATOR, 42, "operator_hold"), TypeError, "node"),
        (lambda: m.remove(OPERATOR, "myNode", "not-a-uuid"), nodemaint.BadRequest, "not-a-uuid"),
        (lambda: m.remove(OPERATOR, "noSuchNode", "8d8d9a25-c1d0-4d4c-93a6-2a4a7e2bf7d8"), nodemaint.NotFound, "noSuchNode"),
        (lambda: m.history(OPERATOR, "myNode", -1), OverflowError, "negative"),
    ]
    for call, error, text in cases:
        with pytest.raises(error, match=text):
            call()
    with pytest.raises(nodemaint.BadRequest) as e:
        m.add(OPERATOR, "myNode", "no_such_type")
    assert e.value.code == 400
    assert db.count("SELECT COUNT(*) FROM node_history") == before
    assert db.count("SELECT COUNT(*) FROM node_maintenance") == 0
    assert db.legacy_view("myNode") == (False, None)
    m.close()


def test_bad_urls_and_missing_schemas_are_clear_errors(tmp_path):
    with pytest.raises(nodemaint.ConfigError) as bad:
        Maintenance("oracle://db/ironic")
    assert isinstance(bad.value, ValueError) and "oracle" in bad.value.message
    with pytest.raises(nodemaint.ServiceUnavailable) as down:
        Maintenance("postgres://nobody@127.0.0.1:1/ironic")
    assert down.value.code == 503
    empty = make_database("sqlite", tmp_path)
    with pytest.raises(nodemaint.DatabaseError, match="nodemaint db upgrade"):
        Maintenance(empty.url)
    with pytest.raises(ValueError, match="max_connections"):
        Maintenance(empty.url, max_connections=0)


def test_sqlalchemy_urls_are_accepted(db):
    if db.backend == "sqlite":
        url = f"sqlite:///{db.path}"
    elif db.backend == "postgres":
        url = db.url.replace("postgres://", "postgresql+psycopg2://", 1)
    else:
        url = db.url.replace("mysql://", "mysql+pymysql://", 1) + "?charset=utf8mb4"
    m = Maintenance(url)
    assert m.node(OPERATOR, "myNode")["name"] == "myNode"
    m.close()
