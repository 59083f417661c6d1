"""The type stubs: they match the built module (mypy's stubtest), and mypy
sees the API through them, good uses and bad."""

import subprocess
import sys
import textwrap


def mypy(*args):
    return subprocess.run([sys.executable, "-m", "mypy", *args], capture_output=True, text=True)


def test_the_stubs_match_the_module():
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "nodemaint._native"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


GOOD = """
from nodemaint import Caller, Decision, Entry, Maintenance, Node, release_decision

def may_release(project: str, entry: Entry) -> bool:
    d: Decision = release_decision(Caller.project("u", project, ["admin"]), Node(lessee=project), entry)
    status: int | None = d.status
    return d.allowed and status is None

def hold(m: Maintenance) -> str:
    made = m.add(Caller.system("op", ["admin"]), "myNode", "operator_hold", reason="Row C", ends_at="+2h")
    return str(made["uuid"])
"""

BAD = """
from nodemaint import Caller, Node, release_decision
release_decision("op-admin", Node(), None)
Caller.project("u", "p", "admin", "extra")
"""


def test_mypy_sees_the_api_through_the_stubs(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent(GOOD))
    done = mypy("--strict", str(good))
    assert done.returncode == 0, done.stdout
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent(BAD))
    done = mypy("--strict", str(bad))
    assert done.returncode == 1
    assert 'Argument 1 to "release_decision" has incompatible type "str"; expected "Caller"' in done.stdout, done.stdout
    assert 'Argument 3 to "release_decision" has incompatible type "None"; expected "Entry"' in done.stdout
    assert 'Too many arguments for "project" of "Caller"' in done.stdout
