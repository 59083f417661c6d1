"""For the same inputs the binding and `nodemaint serve` decide alike: a
property test (hypothesis) over callers, nodes, entries and policies, on
every backend. Each example asserts an entry through the binding, asks the
binding's `release_decision` (or `bulk_release_decision`) about it, then
sends the DELETE to a running `serve` on the same database and compares:
allowed against 2xx, else the status and the exact message."""

import json
import re
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import nodemaint
from nodemaint import Caller, Entry, Maintenance, Node, Policy

from conftest import BIN, LESSEE, LESSEE_B, OWNER, nodemaint as cli

LOCKOUT = '"baremetal:node:maintenance:remove": "role:member and user_id:%(maintenance.asserted_by)s"\n'
OPERATOR = Caller.system("op-admin", ["admin"])


class Serve:
    """`nodemaint serve` with identities from trusted headers, on a free port."""

    def __init__(self, url, log, *args):
        self.log = open(log, "w+")
        self.proc = subprocess.Popen(
            [BIN, "--database-url", url, "serve", "--auth-strategy", "trusted-headers", "--bind", "127.0.0.1:0", *args],
            stderr=self.log,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            self.log.seek(0)
            found = re.search(r"listening on (http://[0-9.:]+)", self.log.read())
            if found:
                self.base = found.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.log.seek(0)
        raise AssertionError(f"nodemaint serve did not start: {self.log.read()}")

    def delete(self, caller, path):
        """The status and Ironic's faultstring (None on success)."""
        headers = {"X-User-Id": caller.user_id, "X-Roles": ",".join(caller.roles), "X-OpenStack-Ironic-API-Version": "1.116"}
        if caller.project_id is None:
            headers["OpenStack-System-Scope"] = "all"
        else:
            headers["X-Project-Id"] = caller.project_id
        request = urllib.request.Request(self.base + path, method="DELETE", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, None
        except urllib.error.HTTPError as e:
            body = json.loads(e.read())
            return e.code, json.loads(body["error_message"])["faultstring"]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


@pytest.fixture
def served(db, tmp_path):
    cli(db.url, "node", "create", "--name", "freeNode")
    policy_file = tmp_path / "lockout.yaml"
    policy_file.write_text(LOCKOUT)
    servers = {
        "defaults": (Serve(db.url, tmp_path / "serve-defaults.log"), Policy()),
        "lockout": (Serve(db.url, tmp_path / "serve-lockout.log", "--policy-file", str(policy_file)), Policy.load(policy_file)),
    }
    m = Maintenance(db.url)
    nodes = {}
    for name in ("myNode", "otherNode", "freeNode"):
        n = m.node(OPERATOR, name)
        nodes[name] = Node(uuid=n["uuid"], name=name, owner=n["owner"], lessee=n["lessee"])
    yield m, servers, nodes
    for server, _ in servers.values():
        server.stop()
    m.close()


ROLES = st.lists(st.sampled_from(["admin", "manager", "member", "reader", "observer"]), max_size=2, unique=True)
CALLERS = st.one_of(
    st.builds(Caller.system, st.sampled_from(["op-admin", "dc-tech", "alice"]), ROLES),
    st.builds(
        Caller.project,
        st.sampled_from(["alice", "bob", "lessee-user", "op-admin"]),
        st.sampled_from([OWNER, LESSEE, LESSEE_B, "stranger"]),
        ROLES,
    ),
)
# Who asserts the entry: someone who may on that node.
ASSERTERS = {
    "system": Caller.system("op-admin", ["admin"]),
    "owner": Caller.project("alice", OWNER, ["member"]),
    "lessee": Caller.project("lessee-user", LESSEE, ["admin"]),
}


def entry_of(row):
    return Entry(
        row["type"],
        row["scope"],
        row["asserted_by"],
        row["asserted_by_project"] or "",
        uuid=row["uuid"],
        reason=row["reason"],
        asserted_at=row["asserted_at"],
    )


def assert_entry(m, node, name, ty, asserter):
    """The node's entry of this type by this asserter, made if it is not
    there, as stored (read by a system reader: the asserter's own view of a
    `legacy` entry someone above it set is masked)."""
    try:
        if ty == "legacy":
            made = m.set(asserter, name, "legacy automation")
        else:
            made = m.add(asserter, name, ty, reason="held")
        return next(e for e in m.list(OPERATOR, name) if e["uuid"] == made["uuid"])
    except nodemaint.Conflict:
        scope = nodemaint.derive_scope(asserter, node)
        return next(e for e in m.list(OPERATOR, name) if e["type"] == ty and e["scope"] == scope)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    caller=CALLERS,
    policy_name=st.sampled_from(["defaults", "lockout"]),
    ty=st.sampled_from(["hardware_failure", "operator_hold", "legacy"]),
    bulk=st.booleans(),
)
def test_the_binding_and_serve_decide_alike(served, data, caller, policy_name, ty, bulk):
    m, servers, nodes = served
    name = data.draw(st.sampled_from(sorted(nodes)))
    node = nodes[name]
    scopes = ["system"] + (["owner"] if node.owner else []) + (["lessee"] if node.lessee else [])
    asserter = ASSERTERS[data.draw(st.sampled_from(scopes))]
    row = assert_entry(m, node, name, ty, asserter)
    server, policy = servers[policy_name]
    if bulk:
        entries = [entry_of(e) for e in m.list(OPERATOR, name) if e["state"] == "active"]
        decision = nodemaint.bulk_release_decision(caller, node, entries, policy)
        status, message = server.delete(caller, f"/v1/nodes/{node.uuid}/maintenance")
    else:
        decision = nodemaint.release_decision(caller, node, entry_of(row), policy)
        status, message = server.delete(caller, f"/v1/nodes/{node.uuid}/maintenance/{row['uuid']}")
    event(f"{'bulk' if bulk else 'one'}: {status}")  # --hypothesis-show-statistics: every answer is exercised
    if decision.allowed:
        assert 200 <= status < 300, (caller, row, status, message)
    else:
        assert (status, message) == (decision.status, decision.message), (caller, row)
