"""Fixtures for the binding's tests: a database of its own per test on
SQLite, PostgreSQL and MariaDB (uniquely named, dropped after), made by the
`nodemaint` binary (`db upgrade`, `node create`), as an operator would.

The server URLs come from NODEMAINT_TEST_POSTGRES_URL and
NODEMAINT_TEST_MYSQL_URL; under CI a missing one fails the run rather than
skipping its backend. NODEMAINT_BIN names the binary (default: the
workspace's target/debug/nodemaint).
"""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = os.environ.get("NODEMAINT_BIN", str(REPO / "target" / "debug" / "nodemaint"))
BACKENDS = ["sqlite", "postgres", "mysql"]

OWNER = "9c84d2e0f1a3"
LESSEE = "a0a0a0a0a0a0"
LESSEE_B = "b0b0b0b0b0b0"


def nodemaint(url, *args):
    """Runs the CLI against `url`; its stdout, or the failure with its stderr."""
    done = subprocess.run([BIN, "--database-url", url, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"nodemaint {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def server_url(backend):
    name = {"postgres": "NODEMAINT_TEST_POSTGRES_URL", "mysql": "NODEMAINT_TEST_MYSQL_URL"}[backend]
    url = os.environ.get(name)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not set; CI runs every backend")
        pytest.skip(f"{name} is not set")
    return url.rstrip("/")


def mysql_connect(url, database=None):
    import pymysql
    from urllib.parse import unquote, urlsplit

    u = urlsplit(url)
    return pymysql.connect(
        host=u.hostname or "127.0.0.1",
        port=u.port or 3306,
        user=unquote(u.username or "root"),
        password=unquote(u.password or ""),
        database=database,
        autocommit=True,
    )


def sqlite_rows(path, query):
    """A query on an SQLite file, from another process: the binding has its
    own SQLite library, and two SQLite libraries in one process release each
    other's POSIX locks on a file (SQLite's "How To Corrupt" §2.2.1); the
    reader then sees a stale database."""
    script = "import json, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(json.dumps(c.execute(sys.argv[2]).fetchall()))"
    done = subprocess.run([sys.executable, "-c", script, path, query], capture_output=True, text=True, check=True)
    return [tuple(r) for r in json.loads(done.stdout)]


class Database:
    """One test's database: its URL, and plain SQL for the assertions."""

    def __init__(self, backend, url, admin_url, name, path=None):
        self.backend, self.url, self.admin_url, self.name, self.path = backend, url, admin_url, name, path

    def _connect(self):
        if self.backend == "postgres":
            import psycopg

            return psycopg.connect(self.url, autocommit=True)
        return mysql_connect(self.admin_url, database=self.name)

    def rows(self, query):
        if self.backend == "sqlite":
            return sqlite_rows(self.path, query)
        conn = self._connect()
        try:
            cur = conn.cursor()
            cur.execute(query)
            return [tuple(r) for r in cur.fetchall()]
        finally:
            conn.close()

    def count(self, query):
        return self.rows(query)[0][0]

    def legacy_view(self, node):
        """(`maintenance`, `maintenance_reason`) as an old reader sees them."""
        (m, reason), = self.rows(f"SELECT maintenance, maintenance_reason FROM nodes WHERE name = '{node}'")
        return bool(m), reason

    def drop(self):
        if self.backend == "sqlite":
            return
        if self.backend == "postgres":
            import psycopg

            with psycopg.connect(self.admin_url + "/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        else:
            conn = mysql_connect(self.admin_url)
            conn.cursor().execute(f"DROP DATABASE IF EXISTS `{self.name}`")
            conn.close()


def make_database(backend, tmp_path):
    name = f"nm_py_{uuid.uuid4().hex[:12]}"
    if backend == "sqlite":
        path = str(tmp_path / f"{name}.db")
        return Database(backend, f"sqlite://{path}?mode=rwc", None, name, path)
    admin = server_url(backend)
    if backend == "postgres":
        import psycopg

        with psycopg.connect(admin + "/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    else:
        conn = mysql_connect(admin)
        conn.cursor().execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
        conn.close()
    return Database(backend, f"{admin}/{name}", admin, name)


@pytest.fixture(params=BACKENDS)
def db(request, tmp_path):
    """An upgraded database with the spec's two nodes: myNode (owned, leased)
    and otherNode (owned)."""
    database = make_database(request.param, tmp_path)
    try:
        nodemaint(database.url, "db", "upgrade")
        nodemaint(database.url, "node", "create", "--name", "myNode", "--owner", OWNER, "--lessee", LESSEE)
        nodemaint(database.url, "node", "create", "--name", "otherNode", "--owner", OWNER)
        yield database
    finally:
        database.drop()
