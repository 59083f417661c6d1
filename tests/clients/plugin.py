"""Drive `nodemaint serve` with this repository's client package
(`client/`, nodemaint-client) through the real `openstack` and `baremetal`
commands: the spec's verbs, their tables and JSON, the server's refusals as
one line, windows end to end (one released by the server's own tick while
this waits), and the estate listing across pages.

    python plugin.py BASE_URL NODEMAINT_BIN DATABASE_URL

Against a server started with `--tick-interval 1` holding one node,
`myNode`, with no entry: with `--auth-strategy noauth`, or, when
NODEMAINT_CLIENT_CLOUD names a cloud of OS_CLIENT_CONFIG_FILE, as that
Keystone user (NODEMAINT_CLIENT_USER: its user id, a system admin).
"""

import json
import os
import subprocess
import sys
import time

BASE, NODEMAINT, DB_URL = sys.argv[1:4]
BIN = os.path.dirname(sys.executable)
CLOUD = os.environ.get("NODEMAINT_CLIENT_CLOUD")
USER = os.environ.get("NODEMAINT_CLIENT_USER", "noauth")
AUTH = ("--os-cloud", CLOUD) if CLOUD else ("--os-auth-type", "none", "--os-endpoint", BASE)


def run(*args, stdin=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=120, input=stdin)


def osc(*args, ok=True, stdin=None, tool="openstack"):
    """`openstack baremetal …` (or `baremetal …`), exiting on an unexpected failure."""
    cmd = (os.path.join(BIN, "openstack"), *AUTH, "baremetal") if tool == "openstack" else (os.path.join(BIN, "baremetal"), *AUTH)
    r = run(*cmd, *args, stdin=stdin)
    if ok and r.returncode != 0:
        sys.exit(f"FAIL: {tool} {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r


def expect(what, got, want):
    if got != want:
        sys.exit(f"FAIL: {what}: got {got!r}, expected {want!r}")
    print(f"ok: {what}")


def refused(what, r, needle):
    """A refusal: non-zero exit, the server's message on one line, no traceback."""
    err = r.stderr.strip()
    if r.returncode == 0 or needle not in err or "Traceback" in err or len(err.splitlines()) != 1:
        sys.exit(f"FAIL: {what}: exit {r.returncode}, stderr {err!r} (expected one line with {needle!r})")
    print(f"ok: {what}")


def entries():
    """The node's active entries, read from the database by the nodemaint CLI."""
    r = run(NODEMAINT, "--database-url", DB_URL, "--format", "json", "maintenance", "list", "myNode")
    if r.returncode != 0:
        sys.exit(f"FAIL: nodemaint maintenance list: {r.stderr.strip()}")
    return sorted((e["type"], e["reason"], e["state"]) for e in json.loads(r.stdout)["maintenance"])


# --- the spec's verbs: add, list (table, JSON, --long), remove ---
added = json.loads(osc("node", "maintenance", "add", "myNode", "--type", "hardware_failure",
                       "--reason", "Disk 3 has bad sectors", "-f", "json").stdout)
expect("add prints the entry", (added["type"], added["reason"], added["scope"]),
       ("hardware_failure", "Disk 3 has bad sectors", "system"))
osc("node", "maintenance", "add", "myNode", "--type", "operator_hold", "--reason", "Row C power work", tool="baremetal")
expect("both entries are in the database", entries(),
       [("hardware_failure", "Disk 3 has bad sectors", "active"), ("operator_hold", "Row C power work", "active")])
table = osc("node", "maintenance", "list", "myNode").stdout
expect("the spec's table columns", table.splitlines()[1].split("|")[1:-1] and
       [c.strip() for c in table.splitlines()[1].split("|")[1:-1]], ["UUID", "Type", "Reason", "Scope"])
listed = json.loads(osc("node", "maintenance", "list", "myNode", "-f", "json").stdout)
expect("list -f json, field by field", sorted((e["Type"], e["Reason"], e["Scope"]) for e in listed),
       [("hardware_failure", "Disk 3 has bad sectors", "system"), ("operator_hold", "Row C power work", "system")])
long = json.loads(osc("node", "maintenance", "list", "myNode", "--long", "-f", "json").stdout)
expect("--long adds who, when, state and releasable",
       sorted((e["Asserted By"], e["Asserted By Project"], e["State"], e["Releasable"]) for e in long),
       [(USER, None, "active", True)] * 2)
refused("a duplicate is the server's 409",
        osc("node", "maintenance", "add", "myNode", "--type", "hardware_failure", "--reason", "again", ok=False),
        "already")
refused("an unknown type is the server's 400",
        osc("node", "maintenance", "add", "myNode", "--type", "bogus", ok=False), "bogus")
refused("a node that does not exist is the server's 404",
        osc("node", "maintenance", "list", "noSuchNode", ok=False), "could not be found")
refused("a uuid that is not one", osc("node", "maintenance", "remove", "myNode", "not-a-uuid", ok=False), "not-a-uuid")
refused("both entries and --all", osc("node", "maintenance", "remove", "myNode", added["uuid"], "--all", ok=False),
        "not both")
refused("--start without --end", osc("node", "maintenance", "add", "myNode", "--type", "operator_hold",
                                     "--reason", "x", "--start", "+1h", ok=False), "--start needs --end")
refused("an end before the start is the server's 400",
        osc("node", "maintenance", "add", "myNode", "--type", "operator_hold", "--reason", "x",
            "--start", "+2d", "--end", "+1d", ok=False), "end")
expect("nothing was written by the refusals", len(entries()), 2)

uuids = osc("node", "maintenance", "list", "myNode", "-f", "value", "-c", "UUID").stdout.split()
osc("node", "maintenance", "remove", "myNode", *uuids)
expect("-f value -c UUID into remove releases them", entries(), [])

# --- windows: scheduled, extended, cancelled; one released by the tick ---
planned = json.loads(osc("node", "maintenance", "add", "myNode", "--type", "operator_hold", "--reason", "rack move",
                         "--start", "+1d", "--end", "+2d", "-f", "json").stdout)
expect("a window that starts later is scheduled", planned["state"], "scheduled")
extended = json.loads(osc("node", "maintenance", "extend", "myNode", planned["uuid"], "--end", "+3d", "-f", "json").stdout)
expect("extend moves the end later", extended["ends_at"] > planned["ends_at"], True)
refused("extend earlier is the server's 400",
        osc("node", "maintenance", "extend", "myNode", planned["uuid"], "--end", "+1h", ok=False), "later")
# Long enough to be listed as active after three more client calls, each
# over a second under Keystone on a loaded machine; the tick then ends it.
short = json.loads(osc("node", "maintenance", "add", "myNode", "--type", "hardware_failure", "--reason", "brief",
                       "--end", "+12s", "-f", "json").stdout)
expect("a window without a start is active", short["state"], "active")
refused("cancel of an active window says to remove it",
        osc("node", "maintenance", "cancel", "myNode", short["uuid"], ok=False), "remove")
windows = json.loads(osc("maintenance", "list", "-f", "json").stdout)
expect("the estate listing shows both windows", sorted(w["State"] for w in windows), ["active", "scheduled"])
paged = json.loads(osc("maintenance", "list", "--limit", "1", "-f", "json").stdout)
expect("--limit 1", len(paged), 1)
deadline = time.time() + 30
while any(t == "hardware_failure" for t, _, _ in entries()):
    if time.time() > deadline:
        sys.exit("FAIL: the server's tick did not release the window within 30 s")
    time.sleep(0.5)
print("ok: the server's tick released the window after its end")
osc("node", "maintenance", "cancel", "myNode", planned["uuid"])
expect("cancel removed the scheduled window", entries(), [])
ended = json.loads(osc("maintenance", "list", "--state", "ended", "--since=-1d", "-f", "json").stdout)
expect("ended windows, with how each ended", sorted((w["State"], w["Ended By"], w["UUID"], w["Type"]) for w in ended),
       sorted([("ended", "cancelled", planned["uuid"], "operator_hold"), ("ended", "expired", short["uuid"], "hardware_failure")]))
expect("an ended window's planned end", [w["Ends At"] for w in ended if w["UUID"] == planned["uuid"]], [extended["ends_at"]])
print("all client-package checks passed")

# --- openstacksdk: the resource and helpers, Scenario 2 to 4's steps ---
import openstack  # noqa: E402
from openstack import exceptions as sdk_exceptions  # noqa: E402

from nodemaint_client import sdk  # noqa: E402

if CLOUD:
    conn = openstack.connect(cloud=CLOUD)
else:
    conn = openstack.connect(auth_type="none", baremetal_endpoint_override=BASE + "/",
                             load_yaml_config=False, load_envvars=False)
held = sdk.add_maintenance(conn, "myNode", "hardware_failure", reason="Disk 3 has bad sectors")
expect("sdk add_maintenance returns the entry", (held.entry_type, held.scope, held.node_id),
       ("hardware_failure", "system", "myNode"))
sdk.add_maintenance(conn, "myNode", "operator_hold", reason="Row C power work")
listed = sdk.list_maintenance(conn, "myNode")
expect("sdk list_maintenance", sorted((e.entry_type, e.reason, e.releasable) for e in listed),
       [("hardware_failure", "Disk 3 has bad sectors", True), ("operator_hold", "Row C power work", True)])
try:
    sdk.add_maintenance(conn, "myNode", "hardware_failure", reason="again")
    sys.exit("FAIL: a duplicate entry was accepted through the sdk")
except sdk_exceptions.ConflictException as e:
    expect("sdk: a duplicate is a ConflictException with the server's words", "already" in str(e), True)
sdk.remove_maintenance(conn, "myNode", held.id)
expect("sdk remove_maintenance", [t for t, _, _ in entries()], ["operator_hold"])
planned = sdk.add_maintenance(conn, "myNode", "hardware_failure", reason="rack move", starts_at="+1d", ends_at="+2d")
moved = sdk.extend_maintenance(conn, "myNode", planned.id, "+3d")
expect("sdk extend_maintenance moves the end", moved.ends_at > planned.ends_at, True)
sdk.remove_all_maintenance(conn, "myNode")
expect("sdk remove_all_maintenance releases every active entry", entries(), [("hardware_failure", "rack move", "scheduled")])
sdk.cancel_maintenance(conn, "myNode", planned.id)
expect("sdk cancel_maintenance cancels the scheduled window", entries(), [])
print("all sdk checks passed")

# The resource itself, as any openstacksdk resource is used.
Entry = sdk.NodeMaintenanceEntry
created = Entry.new(node_id="myNode", entry_type="hardware_failure", reason="via the resource").create(conn.baremetal)
expect("resource create", (created.scope, created.state), ("system", "active"))
window = Entry.new(node_id="myNode", entry_type="operator_hold", reason="w", ends_at="+1d").create(conn.baremetal)
first_end = window.ends_at
window.ends_at = "+2d"
window = window.commit(conn.baremetal)
expect("resource commit of ends_at extends the window", window.ends_at > first_end, True)
expect("resource list", sorted(e.entry_type for e in Entry.list(conn.baremetal, node_id="myNode")),
       ["hardware_failure", "operator_hold"])
created.delete(conn.baremetal)
window.delete(conn.baremetal)
expect("resource delete", entries(), [])
print("all resource checks passed")

# --- every verb's --help has an example ---
for verb in (("node", "maintenance", "add"), ("node", "maintenance", "list"), ("node", "maintenance", "remove"),
             ("node", "maintenance", "extend"), ("node", "maintenance", "cancel"), ("maintenance", "list")):
    text = osc(*verb, "--help").stdout
    expect(f"{' '.join(verb)} --help has an example", "Example:" in text and "openstack baremetal" in text, True)
