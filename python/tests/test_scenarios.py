"""The node maintenance spec's usage scenarios 1-7 through the binding, on
every backend, with the Rust scenario tests' assertions
(tests/integration/scenarios.rs): rows, the boolean, the reason, history,
statuses and messages."""

import uuid

import pytest

import nodemaint
from nodemaint import Caller, Maintenance

from conftest import LESSEE, LESSEE_B, OWNER, nodemaint as cli


def operator():
    return Caller.system("op-admin", ["admin"])


def owner_member(user):
    return Caller.project(user, OWNER, ["member"])


def lessee_admin(project):
    return Caller.project("lessee-user", project, ["admin"])


@pytest.fixture
def svc(db):
    m = Maintenance(db.url)
    yield m
    m.close()


def test_scenario_1_hardware_replacement_hold(db, svc):
    reason = "Disk 3 has bad sectors, scheduled for replacement, see ticket https://myjira/CIDTEAM-3743"
    entry = svc.add(owner_member("1f2e3d4c5b6a"), "myNode", "hardware_failure", reason=reason)
    assert entry["type"] == "hardware_failure"
    assert entry["reason"] == reason
    assert entry["scope"] == "owner"
    assert entry["asserted_by"] == "1f2e3d4c5b6a"
    assert entry["asserted_by_project"] == OWNER
    assert entry["extra"] == {}
    at = entry["asserted_at"]
    assert len(at) == 25 and at.endswith("+00:00") and at[10] == "T", at
    uuid.UUID(entry["uuid"])
    assert db.legacy_view("myNode") == (True, f"hardware_failure: {reason}")
    events = svc.history(operator(), "myNode", 10)
    assert len(events) == 1
    assert (events[0]["user"], events[0]["project"]) == ("1f2e3d4c5b6a", OWNER)
    assert f"{entry['uuid']} asserted (type hardware_failure, scope owner" in events[0]["event"]


def test_scenario_2_a_second_hold_and_409_on_duplicates(db, svc):
    hw = svc.add(owner_member("alice"), "myNode", "hardware_failure", reason="Disk 3")
    hold = svc.add(operator(), "myNode", "operator_hold", reason="Row C power work, change window CHG-2211")
    assert hold["scope"] == "system"
    assert hold["asserted_by_project"] is None
    listed = svc.list(operator(), "myNode")
    assert [e["uuid"] for e in listed] == [hw["uuid"], hold["uuid"]]
    assert db.legacy_view("myNode") == (
        True,
        "hardware_failure: Disk 3; operator_hold: Row C power work, change window CHG-2211",
    )
    with pytest.raises(nodemaint.Conflict) as again:
        svc.add(Caller.system("another-op", ["admin"]), "myNode", "operator_hold", reason="x")
    assert again.value.code == 409 and hold["uuid"] in again.value.message
    with pytest.raises(nodemaint.Conflict):
        svc.add(owner_member("bob"), "myNode", "hardware_failure", reason="y")
    svc.add(owner_member("bob"), "myNode", "operator_hold", reason="owner's own hold")
    assert len(svc.list(operator(), "myNode")) == 3
    assert db.count("SELECT COUNT(*) FROM node_history") == 3, "refused asserts write no history"


def test_scenario_3_releasing_one_hold_at_a_time(db, svc):
    svc.add(operator(), "myNode", "hardware_failure", reason="Disk 3")
    hold = svc.add(operator(), "myNode", "operator_hold", reason="Row C power work")
    released = svc.remove(Caller.system("dc-tech", ["member"]), "myNode", hold["uuid"])
    assert released["uuid"] == hold["uuid"]
    assert db.legacy_view("myNode") == (True, "hardware_failure: Disk 3")
    last = svc.history(operator(), "myNode", 10)[-1]
    assert last["user"] == "dc-tech"
    text = last["event"]
    assert f"{hold['uuid']} released (type operator_hold, scope system" in text, text
    assert "reason: Row C power work" in text and text.endswith("by dc-tech (project none)"), text
    assert db.count("SELECT COUNT(*) FROM node_maintenance") == 1, "release hard-deletes"


def test_scenario_4_releasing_everything_at_once(db, svc):
    svc.add(owner_member("alice"), "myNode", "hardware_failure", reason="Disk 3")
    svc.add(operator(), "myNode", "operator_hold", reason="Row C")
    svc.set(operator(), "myNode", "rebalancing")
    released = svc.remove_all(operator(), "myNode")
    assert len(released) == 3
    assert db.legacy_view("myNode") == (False, None)
    assert svc.list(operator(), "myNode") == []
    assert db.count("SELECT COUNT(*) FROM node_history WHERE event LIKE '% released %'") == 3


def test_scenario_5_scoped_holds_and_rbac_denials(db, svc):
    sys = svc.add(operator(), "myNode", "hardware_failure", reason="PSU")
    own = svc.add(lessee_admin(LESSEE), "myNode", "operator_hold", reason="our tests")
    assert own["scope"] == "lessee"
    with pytest.raises(nodemaint.Forbidden) as bulk:
        svc.remove_all(lessee_admin(LESSEE), "myNode")
    assert bulk.value.code == 403
    assert bulk.value.message == (
        f"Cannot release maintenance entry {sys['uuid']} (type hardware_failure, scope system): "
        "not permitted at lessee scope"
    )
    assert len(svc.list(operator(), "myNode")) == 2, "a refused bulk release releases nothing"
    seen = {e["uuid"]: e for e in svc.list(lessee_admin(LESSEE), "myNode")}
    theirs = seen[sys["uuid"]]
    assert (theirs["asserted_by"], theirs["asserted_by_project"]) == ("******", "******")
    assert theirs["reason"] == "PSU"
    assert seen[own["uuid"]]["asserted_by"] == "lessee-user"
    with pytest.raises(nodemaint.Forbidden):
        svc.remove(lessee_admin(LESSEE), "myNode", sys["uuid"])
    svc.remove(lessee_admin(LESSEE), "myNode", own["uuid"])
    assert db.legacy_view("myNode") == (True, "hardware_failure: PSU")
    stranger = Caller.project("x", "ffffffff", ["admin"])
    with pytest.raises(nodemaint.NotFound) as hidden:
        svc.list(stranger, "myNode")
    assert hidden.value.code == 404 and hidden.value.message == "Node myNode could not be found."
    with pytest.raises(nodemaint.NotFound):
        svc.add(stranger, "myNode", "operator_hold", reason="x")


def test_scenario_6_holds_across_a_lease_change(db, svc):
    hold = svc.add(lessee_admin(LESSEE), "myNode", "operator_hold", reason="lease A work")
    cli(db.url, "node", "set", "myNode", "--lessee", LESSEE_B)
    expected = (
        f"Cannot release maintenance entry {hold['uuid']} (type operator_hold, scope lessee, "
        f"asserted by project {LESSEE}): not asserted by your project"
    )
    with pytest.raises(nodemaint.Forbidden) as bulk:
        svc.remove_all(lessee_admin(LESSEE_B), "myNode")
    assert (bulk.value.code, bulk.value.message) == (403, expected)
    with pytest.raises(nodemaint.Forbidden) as one:
        svc.remove(lessee_admin(LESSEE_B), "myNode", hold["uuid"])
    assert (one.value.code, one.value.message) == (403, expected)
    with pytest.raises(nodemaint.NotFound):
        svc.list(lessee_admin(LESSEE), "myNode")
    svc.remove(owner_member("alice"), "myNode", hold["uuid"])
    assert db.legacy_view("myNode") == (False, None)

    owned = svc.add(owner_member("alice"), "myNode", "hardware_failure", reason="old owner's")
    cli(db.url, "node", "set", "myNode", "--owner", "new-owner")
    with pytest.raises(nodemaint.Forbidden) as refused:
        svc.remove(Caller.project("carol", "new-owner", ["member"]), "myNode", owned["uuid"])
    assert refused.value.message.endswith("not asserted by your project")
    svc.remove(operator(), "myNode", owned["uuid"])


def test_scenario_7_legacy_automation_unchanged(db, svc):
    written = "LK_OP|HW_ERR: rebalancing rack; don't touch ✓"
    legacy = svc.set(operator(), "myNode", written)
    assert legacy["type"] == "legacy"
    assert db.legacy_view("myNode") == (True, written), "the exact string written"
    again = svc.set(owner_member("alice"), "myNode", "rebalancing rack")
    assert (again["uuid"], again["scope"]) == (legacy["uuid"], "system")
    assert again["asserted_by"] == "******", "the owner sees the system entry masked"
    stored = svc.list(operator(), "myNode")[0]
    assert (stored["asserted_by"], stored["asserted_by_project"]) == ("op-admin", None)
    assert db.legacy_view("myNode") == (True, "rebalancing rack")
    assert db.count("SELECT COUNT(*) FROM node_maintenance WHERE type = 'legacy'") == 1
    svc.unset(owner_member("alice"), "myNode")
    assert db.legacy_view("myNode") == (False, None)
    svc.set(operator(), "myNode")
    assert db.legacy_view("myNode") == (True, None)
    sys = svc.add(operator(), "myNode", "hardware_failure", reason="Disk 3")
    with pytest.raises(nodemaint.Forbidden) as e:
        svc.unset(owner_member("alice"), "myNode")
    assert sys["uuid"] in e.value.message and "not permitted at owner scope" in e.value.message
    assert len(svc.list(operator(), "myNode")) == 2
    assert db.legacy_view("myNode") == (True, "legacy; hardware_failure: Disk 3")


def test_windows_schedule_extend_and_cancel(db, svc):
    window = svc.schedule(operator(), "myNode", "operator_hold", "+1d", "+2d", reason="Row C power")
    assert window["state"] == "scheduled" and window["starts_at"] and window["ends_at"]
    assert db.legacy_view("myNode") == (False, None), "a scheduled window holds nothing yet"
    longer = svc.extend(operator(), "myNode", window["uuid"], "+3d")
    assert longer["ends_at"] > window["ends_at"]
    with pytest.raises(nodemaint.BadRequest) as earlier:
        svc.extend(operator(), "myNode", window["uuid"], "+1d")
    assert earlier.value.code == 400 and "a window can be extended, not shortened" in earlier.value.message
    with pytest.raises(nodemaint.Forbidden):
        svc.cancel(lessee_admin(LESSEE), "myNode", window["uuid"])
    cancelled = svc.cancel(operator(), "myNode", window["uuid"])
    assert cancelled["uuid"] == window["uuid"]
    assert db.count("SELECT COUNT(*) FROM node_maintenance_schedule") == 0
    kinds = [h["event"].split(" ")[3] for h in svc.history(operator(), "myNode")]
    assert kinds == ["scheduled", "extended", "cancelled"], kinds
