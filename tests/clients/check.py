"""Drive `nodemaint serve` with the real OpenStack clients, as a legacy
fleet script would (spec scenario 7), and check what the clients print and
what the database holds.

    python check.py BASE_URL NODEMAINT_BIN DATABASE_URL

Uses the `baremetal` command (python-ironicclient's OSC plugin) and
openstacksdk's baremetal proxy, both with auth type `none`, against a server
started with `--auth-strategy noauth` holding one node, `myNode`.
"""

import json
import os
import subprocess
import sys

BASE, NODEMAINT, DB_URL = sys.argv[1:4]
BAREMETAL = os.path.join(os.path.dirname(sys.executable), "baremetal")


def run(*args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def baremetal(*args, ok=True):
    r = run(BAREMETAL, "--os-auth-type", "none", "--os-endpoint", BASE, *args)
    if ok and r.returncode != 0:
        sys.exit(f"FAIL: baremetal {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r


def entries():
    """The node's active entries, read from the database by the nodemaint CLI."""
    r = run(NODEMAINT, "--database-url", DB_URL, "--format", "json", "maintenance", "list", "myNode")
    if r.returncode != 0:
        sys.exit(f"FAIL: nodemaint maintenance list: {r.stderr.strip()}")
    return [(e["type"], e["reason"]) for e in json.loads(r.stdout)["maintenance"]]


def expect(what, got, want):
    if got != want:
        sys.exit(f"FAIL: {what}: got {got!r}, expected {want!r}")
    print(f"ok: {what}")


def show():
    node = json.loads(baremetal("node", "show", "myNode", "-f", "json").stdout)
    return node["maintenance"], node["maintenance_reason"]


# --- python-ironicclient / OSC: node maintenance set|unset, node show ---
r = baremetal("node", "maintenance", "set", "myNode", "--reason", "rebalancing rack")
expect("baremetal maintenance set prints nothing", r.stdout, "")
expect("node show after set: reason read back verbatim", show(), (True, "rebalancing rack"))
expect("the database holds one legacy entry", entries(), [("legacy", "rebalancing rack")])

baremetal("node", "maintenance", "set", "myNode", "--reason", "rack 2")
expect("a second set updates the one legacy entry", entries(), [("legacy", "rack 2")])
listed = json.loads(baremetal("node", "list", "-f", "json").stdout)
expect("node list shows it in maintenance", [(n["name"], n["maintenance"]) for n in listed], [("myNode", True)])

in_maintenance = json.loads(baremetal("node", "list", "--maintenance", "-f", "json").stdout)
expect("node list --maintenance shows it", [n["name"] for n in in_maintenance], ["myNode"])
long = json.loads(baremetal("node", "list", "--long", "-f", "json").stdout)
expect("node list --long shows the reason", [(n["name"], n["maintenance_reason"]) for n in long],
       [("myNode", "rack 2")])
plain = baremetal("node", "list")
expect("plain node list prints the node's table", "myNode" in plain.stdout, True)

baremetal("node", "maintenance", "unset", "myNode")
expect("node list --maintenance after unset is empty",
       json.loads(baremetal("node", "list", "--maintenance", "-f", "json").stdout), [])
expect("node show after unset", show(), (False, None))
expect("the database holds no entry", entries(), [])

missing = baremetal("node", "show", "nope", ok=False)
expect("an unknown node fails", missing.returncode != 0, True)
expect("the client shows Ironic's message", "Node nope could not be found." in missing.stderr, True)

# A typed entry beside the legacy one: old readers see the synthesised reason,
# and the boolean unset releases everything (noauth is a system admin).
baremetal("node", "maintenance", "set", "myNode", "--reason", "script hold")
r = run(NODEMAINT, "--database-url", DB_URL, "-q", "maintenance", "add", "myNode",
        "--type", "hardware_failure", "--reason", "Disk 3")
expect("nodemaint maintenance add", r.returncode, 0)
expect("node show with two entries", show(), (True, "legacy: script hold; hardware_failure: Disk 3"))
baremetal("node", "maintenance", "unset", "myNode")
expect("unset released every entry", (show(), entries()), ((False, None), []))

# --- openstacksdk: set_node_maintenance / unset_node_maintenance ---
import openstack  # noqa: E402

conn = openstack.connect(auth_type="none", baremetal_endpoint_override=BASE + "/",
                         load_yaml_config=False, load_envvars=False)
node = conn.baremetal.set_node_maintenance("myNode", reason="sdk: rebalancing")
expect("sdk set_node_maintenance returns the node", (node.is_maintenance, node.maintenance_reason),
       (True, "sdk: rebalancing"))
node = conn.baremetal.get_node("myNode")
expect("sdk get_node", (node.is_maintenance, node.maintenance_reason), (True, "sdk: rebalancing"))
expect("the database holds the sdk's legacy entry", entries(), [("legacy", "sdk: rebalancing")])
node = conn.baremetal.unset_node_maintenance("myNode")
expect("sdk unset_node_maintenance", (node.is_maintenance, node.maintenance_reason), (False, None))
expect("the database holds no entry after the sdk unset", entries(), [])
print("all real-client checks passed")
