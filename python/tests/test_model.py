"""The pure model from Python: decisions, masking, the synthesised reason,
the type registry, the policy, and bad arguments. No database."""

from datetime import datetime, timedelta, timezone

import pytest

import nodemaint
from nodemaint import (
    Caller,
    Entry,
    Event,
    Node,
    Policy,
    bulk_release_decision,
    derive_scope,
    entry_types,
    mask,
    release_decision,
    release_decisions,
    synthesised_reason,
)

OWNER, LESSEE = "own", "les"
NODE = Node(uuid="1be26c0b-03f2-4d2e-ae87-c02d7f33c123", name="myNode", owner=OWNER, lessee=LESSEE)
LOCKOUT = '"baremetal:node:maintenance:remove": "role:member and user_id:%(maintenance.asserted_by)s"'


def test_callers_get_keystones_implied_roles_and_their_scope():
    assert Caller.project("u", LESSEE, ["Admin"]).roles == ["admin", "manager", "member", "reader"]
    assert derive_scope(Caller.system("op", ["reader"]), NODE) == "system"
    assert derive_scope(Caller.project("u", OWNER, ["member"]), NODE) == "owner"
    assert derive_scope(Caller.project("u", LESSEE, ["member"]), NODE) == "lessee"
    assert derive_scope(Caller.project("u", "stranger", ["admin"]), NODE) is None
    legacy_admin = Caller.project("u", "stranger", ["admin"])
    assert derive_scope(legacy_admin, NODE, enforce_scope=False) == "system"


def test_release_decisions_carry_the_rest_apis_status_and_message():
    system_hold = Entry("hardware_failure", "system", "op", uuid="8d8d9a25-c1d0-4d4c-93a6-2a4a7e2bf7d8")
    lessee = Caller.project("lu", LESSEE, ["admin"])
    d = release_decision(lessee, NODE, system_hold)
    assert not d and (d.allowed, d.status) == (False, 403)
    assert d.message == (
        "Cannot release maintenance entry 8d8d9a25-c1d0-4d4c-93a6-2a4a7e2bf7d8 "
        "(type hardware_failure, scope system): not permitted at lessee scope"
    )
    assert release_decision(Caller.system("dc-tech", ["member"]), NODE, system_hold)
    stale = Entry("operator_hold", "lessee", "lu", "a0a0a0", uuid="f00dfeed-0000-4000-8000-000000000000")
    other = release_decision(lessee, NODE, stale)
    assert other.message.endswith("asserted by project a0a0a0): not asserted by your project")
    stranger = release_decision(Caller.project("x", "nope", ["admin"]), NODE, system_hold)
    assert (stranger.status, stranger.message) == (404, f"Node {NODE.uuid} could not be found.")
    # legacy and fault are exempt from the floors: policy alone decides.
    legacy = Entry("legacy", "system", "op")
    assert release_decision(Caller.project("u", OWNER, ["member"]), NODE, legacy)
    reader = release_decision(Caller.project("u", OWNER, ["reader"]), NODE, legacy)
    assert reader.status == 403
    assert reader.message == (
        f"Cannot release maintenance entry {legacy.uuid} (type legacy, scope system): "
        "baremetal:node:maintenance:remove is disallowed by policy"
    )


def test_policy_tightens_release_but_never_relaxes_the_floors():
    lockout = Policy.from_text(LOCKOUT)
    alices = Entry("operator_hold", "owner", "alice", OWNER)
    assert release_decision(Caller.project("alice", OWNER, ["member"]), NODE, alices, lockout)
    bob = release_decision(Caller.project("bob", OWNER, ["member"]), NODE, alices, lockout)
    assert bob.status == 403 and "disallowed by policy" in bob.message
    assert release_decision(Caller.project("bob", OWNER, ["member"]), NODE, alices), "the defaults let a teammate"
    permissive = Policy.from_text('"baremetal:node:maintenance:remove": "@"')
    system_hold = Entry("operator_hold", "system", "op")
    d = release_decision(Caller.project("lu", LESSEE, ["admin"]), NODE, system_hold, permissive)
    assert d.status == 403 and d.message.endswith("not permitted at lessee scope")
    assert lockout.enforce("baremetal:node:maintenance:remove", Caller.project("alice", OWNER, ["member"]), NODE, alices)
    assert not Policy().enforce("baremetal:node:maintenance:add", Caller.project("u", LESSEE, ["member"]), NODE)


def test_a_bulk_release_is_all_or_nothing_and_names_every_blocker():
    a = Entry("hardware_failure", "system", "op", uuid="aaaaaaaa-0000-4000-8000-000000000001")
    b = Entry("operator_hold", "owner", "alice", OWNER, uuid="aaaaaaaa-0000-4000-8000-000000000002")
    c = Entry("operator_hold", "lessee", "lu", LESSEE, uuid="aaaaaaaa-0000-4000-8000-000000000003")
    lessee = Caller.project("lu", LESSEE, ["admin"])
    d = bulk_release_decision(lessee, NODE, [a, b, c])
    assert d.status == 403
    assert d.message.count("Cannot release") == 2 and a.uuid in d.message and b.uuid in d.message
    assert c.uuid not in d.message
    assert bulk_release_decision(lessee, NODE, [c])
    assert bulk_release_decision(Caller.system("op", ["admin"]), NODE, [a, b, c])
    refused = bulk_release_decision(Caller.project("u", LESSEE, ["reader"]), NODE, [])
    assert (refused.status, refused.message) == (403, "baremetal:node:clear_maintenance is disallowed by policy")


def test_the_batch_form_decides_each_item_as_the_single_call_does():
    callers = [Caller.system("op", ["admin"]), Caller.project("lu", LESSEE, ["admin"]), Caller.project("x", "no", ["admin"])]
    entries = [Entry("operator_hold", s, "who", p) for s, p in (("system", ""), ("owner", OWNER), ("lessee", LESSEE))]
    items = [(c, NODE, e) for c in callers for e in entries]
    assert release_decisions(items) == [release_decision(c, n, e) for c, n, e in items]
    assert [d.status for d in release_decisions(items)] == [None, None, None, 403, 403, None, 404, 404, 404]


def test_masking_hides_identities_above_the_readers_scope():
    hold = Entry("hardware_failure", "system", "op-secret", reason="PSU")
    lessee = Caller.project("lu", LESSEE, ["reader"])
    seen = mask(hold, lessee, NODE)
    assert (seen.asserted_by, seen.asserted_by_project, seen.reason) == ("******", "******", "PSU")
    assert mask(hold, Caller.system("op", ["reader"]), NODE).asserted_by == "op-secret"
    own = Entry("operator_hold", "lessee", "lu", LESSEE)
    assert mask(own, lessee, NODE).asserted_by == "lu"
    with pytest.raises(nodemaint.NotFound):
        mask(hold, Caller.project("x", "stranger", ["admin"]), NODE)
    # An event: the asserter and the actor, each by its own scope; the text rendered from the fields.
    released = Event("released", hold, Caller.project("ou", OWNER, ["member"]), at=datetime(2026, 12, 7, 10, 0, 0))
    for_lessee = mask(released, lessee, NODE)
    assert "op-secret" not in for_lessee.text() and "ou" != for_lessee.actor == "******"
    assert for_lessee.text().endswith("by ****** (project ******)"), for_lessee.text()
    for_owner = mask(released, Caller.project("o2", OWNER, ["reader"]), NODE)
    assert (for_owner.asserted_by, for_owner.actor) == ("******", "ou")
    at = datetime(2026, 12, 7, 9, 0, 0)
    fixed = Entry("hardware_failure", "system", "op-secret", reason="PSU", uuid="u1", asserted_at=at)
    assert Event("released", fixed, Caller.project("ou", OWNER, ["member"])).text() == (
        "maintenance entry u1 released (type hardware_failure, scope system, asserted by op-secret "
        "(project none) at 2026-12-07T09:00:00+00:00, reason: PSU) by ou (project own)"
    )
    with pytest.raises(TypeError, match="item must be an Entry or an Event"):
        mask("not an entry", lessee, NODE)


def test_an_id_full_of_separators_never_moves_a_mask():
    sneaky = "op) secret (x, asserted by y) by z (project q) at 2026"
    hold = Entry("operator_hold", "system", sneaky, reason=", asserted by ) by ")
    event = Event("released", hold, Caller.system(sneaky, ["admin"]))
    text = mask(event, Caller.project("u", OWNER, ["member"]), NODE).text()
    assert "secret" not in text and "op)" not in text, text


def test_the_synthesised_reason_and_the_type_registry():
    t0 = datetime(2026, 12, 7, 10, 0, 0, tzinfo=timezone.utc)
    entries = [
        Entry("hardware_failure", "owner", "a", OWNER, reason="Disk 3", asserted_at=t0),
        Entry("legacy", "system", "op", reason="rebalancing", asserted_at=t0 + timedelta(seconds=1)),
        Entry("operator_hold", "system", "op", asserted_at=t0 + timedelta(seconds=2)),
    ]
    assert synthesised_reason(entries) == "hardware_failure: Disk 3; legacy: rebalancing; operator_hold"
    assert synthesised_reason(entries[1:2]) == "rebalancing", "a lone legacy entry's reason is shown as written"
    assert synthesised_reason([]) is None
    types = {t["name"]: t for t in entry_types()}
    assert set(types) == {"legacy", "fault", "hardware_failure", "operator_hold"}
    assert types["fault"]["reserved"] and types["legacy"]["policy_only_release"]
    assert not types["operator_hold"]["reserved"]


def test_times_are_datetimes_or_rfc3339_strings_in_utc():
    e = Entry("operator_hold", "system", "op", asserted_at="2026-12-07T12:00:00+02:00", ends_at=datetime(2026, 12, 8))
    assert e.asserted_at == datetime(2026, 12, 7, 10, 0, 0, tzinfo=timezone.utc)
    assert e.ends_at == datetime(2026, 12, 8, tzinfo=timezone.utc)
    assert e.to_dict()["ends_at"] == "2026-12-08T00:00:00+00:00"


@pytest.mark.parametrize(
    "make, error, text",
    [
        (lambda: Entry("operator_hold", "global", "op"), ValueError, "scope must be one of system, owner, lessee"),
        (lambda: Entry("operator_hold", 3, "op"), TypeError, "scope"),
        (lambda: Entry("", "system", "op"), ValueError, "type must not be empty"),
        (lambda: Entry("operator_hold", "system", "op", ends_at="tomorrow"), ValueError, "ends_at"),
        (lambda: Entry("operator_hold", "system", "op", ends_at=12), TypeError, "ends_at must be a datetime"),
        (lambda: Caller.project("u", "p", "admin"), TypeError, "roles"),
        (lambda: Caller("u", "p", [], system_scope=True), ValueError, "system-scoped caller has no project_id"),
        (lambda: Event("exploded", Entry("operator_hold", "system", "op"), Caller.noauth()), ValueError, "kind must be one of"),
        (lambda: release_decision("op", NODE, Entry("legacy", "system", "op")), TypeError, "caller"),
        (lambda: Policy.from_text("{not yaml: ["), nodemaint.ConfigError, "policy"),
    ],
)
def test_bad_arguments_are_type_or_value_errors_naming_the_argument(make, error, text):
    with pytest.raises(error, match=text):
        make()


def test_a_rust_panic_is_a_python_exception():
    with pytest.raises(nodemaint.InternalError, match="deliberately") as e:
        nodemaint._native._panic_for_tests()
    assert e.value.code == 500 and isinstance(e.value, Exception)
