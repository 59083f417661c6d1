"""The binding's pure decision against a straightforward pure-Python rewrite
of the same rule (written here, not in the package), on 100,000 mixed
(caller, node, entry) items with the default policy.

    python python/bench/decisions.py [--items N] [--json FILE]

Checks first that the rewrite and the binding decide every item alike
(allowed, status, message): a faster wrong answer would prove nothing.
Then times, best of 5 rounds each: one call at a time through the binding,
the rewrite in a loop, and the binding's batch form over all items.
Targets (issue 30): one call >= the rewrite's speed; batch >= 20x it.
"""

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field

import nodemaint

# ---------------------------------------------------------------- the rewrite
RANK = {"lessee": 0, "owner": 1, "system": 2}
IMPLIED = {"admin": ("manager", "member", "reader"), "manager": ("member", "reader"), "member": ("reader",)}
REMOVE = "baremetal:node:maintenance:remove"


def with_implied(roles):
    out = []
    for r in roles:
        for x in (r, *IMPLIED.get(r, ())):
            if x not in out:
                out.append(x)
    return frozenset(out)


@dataclass(slots=True)
class PyCaller:
    user_id: str
    project_id: str | None
    roles: frozenset = field(default_factory=frozenset)

    @property
    def system_scope(self):
        return self.project_id is None


@dataclass(slots=True)
class PyNode:
    uuid: str
    owner: str | None
    lessee: str | None


@dataclass(slots=True)
class PyEntry:
    uuid: str
    type: str
    scope: str
    asserted_by_project: str


def rewrite_release_decision(caller, node, entry):
    """Ironic's default rules and the spec's floors, by hand: (allowed, status, message)."""
    roles, project, system = caller.roles, caller.project_id, caller.system_scope
    if system:
        scope = "system"
    elif project and project == node.owner:
        scope = "owner"
    elif project and project == node.lessee:
        scope = "lessee"
    else:
        return False, 404, f"Node {node.uuid} could not be found."
    service = "service" in roles
    readable = (
        (system and ("reader" in roles or service))
        or ("reader" in roles and project is not None and (project == node.owner or project == node.lessee))
        or (service and project is not None and project == node.owner)
    )
    if not readable:
        return False, 404, f"Node {node.uuid} could not be found."
    may_remove = (
        (system and ("member" in roles or service))
        or (project is not None and project == node.owner and ("member" in roles or service))
        or (project is not None and project == node.lessee and ("admin" in roles or "manager" in roles))
    )
    if not may_remove:
        return False, 403, (
            f"Cannot release maintenance entry {entry.uuid} (type {entry.type}, scope {entry.scope}): "
            f"{REMOVE} is disallowed by policy"
        )
    if entry.type in ("legacy", "fault"):
        return True, None, None
    mine, theirs = RANK[scope], RANK.get(entry.scope, 2)
    if mine > theirs or (mine == theirs and scope == "system"):
        return True, None, None
    if mine < theirs:
        return False, 403, (
            f"Cannot release maintenance entry {entry.uuid} (type {entry.type}, scope {entry.scope}): "
            f"not permitted at {scope} scope"
        )
    if (project or "") == entry.asserted_by_project:
        return True, None, None
    return False, 403, (
        f"Cannot release maintenance entry {entry.uuid} (type {entry.type}, scope {entry.scope}, "
        f"asserted by project {entry.asserted_by_project}): not asserted by your project"
    )


# ---------------------------------------------------------------- the data
def items(n, seed=30):
    rnd = random.Random(seed)
    projects = [f"p{i:03d}" for i in range(40)]
    nodes = []
    for i in range(200):
        owner = rnd.choice(projects + [None])
        lessee = rnd.choice(projects + [None, None])
        nodes.append((f"00000000-0000-4000-8000-{i:012d}", owner, lessee))
    out = []
    for i in range(n):
        uuid, owner, lessee = rnd.choice(nodes)
        kind = rnd.random()
        roles = rnd.sample(["admin", "manager", "member", "reader", "service"], rnd.randint(0, 2))
        if kind < 0.2:
            caller = (f"op{i % 7}", None, roles)
        elif kind < 0.55 and owner:
            caller = (f"u{i % 11}", owner, roles)
        elif kind < 0.9 and lessee:
            caller = (f"u{i % 13}", lessee, roles)
        else:
            caller = (f"u{i % 5}", rnd.choice(projects), roles)
        scope = rnd.choice(["system", "owner", "lessee"])
        asserter_project = "" if scope == "system" else rnd.choice([owner or "", lessee or "", rnd.choice(projects)])
        entry = (f"e{i:07d}-0000-4000-8000-000000000000", rnd.choice(["hardware_failure", "operator_hold", "legacy", "fault"]), scope, asserter_project)
        out.append((caller, (uuid, owner, lessee), entry))
    return out


def binding_items(raw):
    out = []
    for (user, project, roles), (uuid, owner, lessee), (eu, ty, scope, ap) in raw:
        caller = nodemaint.Caller.system(user, roles) if project is None else nodemaint.Caller.project(user, project, roles)
        out.append((caller, nodemaint.Node(uuid=uuid, owner=owner, lessee=lessee), nodemaint.Entry(ty, scope, "someone", ap, uuid=eu)))
    return out


def rewrite_items(raw):
    return [
        (PyCaller(user, project, with_implied(roles)), PyNode(uuid, owner, lessee), PyEntry(eu, ty, scope, ap))
        for (user, project, roles), (uuid, owner, lessee), (eu, ty, scope, ap) in raw
    ]


def best_of(rounds, work):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    raw = items(args.items)
    ours, theirs = binding_items(raw), rewrite_items(raw)
    policy = nodemaint.Policy()

    decided = nodemaint.release_decisions(ours, policy)
    by_rewrite = [rewrite_release_decision(*it) for it in theirs]
    wrong = [i for i, (d, r) in enumerate(zip(decided, by_rewrite)) if (d.allowed, d.status, d.message) != r]
    if wrong:
        i = wrong[0]
        sys.exit(f"the rewrite disagrees with the binding on {len(wrong)} items; first: {raw[i]}: {decided[i]!r} vs {by_rewrite[i]}")
    outcomes = {}
    for d in decided:
        outcomes[d.status or 200] = outcomes.get(d.status or 200, 0) + 1

    release_decision = nodemaint.release_decision
    single = best_of(args.rounds, lambda: [release_decision(c, n, e, policy) for c, n, e in ours])
    rewrite = best_of(args.rounds, lambda: [rewrite_release_decision(c, n, e) for c, n, e in theirs])
    batch = best_of(args.rounds, lambda: nodemaint.release_decisions(ours, policy))
    # Where the batch's time goes: reading the items, deciding, making the results.
    extract = best_of(args.rounds, lambda: nodemaint._native._bench_extract(ours))
    decide = best_of(args.rounds, lambda: nodemaint._native._bench_decide(ours, policy))
    assert nodemaint._native._bench_decide(ours, policy) == outcomes.get(200, 0)
    n = len(raw)
    figures = {
        "items": n,
        "outcomes": outcomes,
        "rewrite_ns_per_item": rewrite / n * 1e9,
        "single_call_ns_per_item": single / n * 1e9,
        "batch_ns_per_item": batch / n * 1e9,
        "single_vs_rewrite": rewrite / single,
        "batch_vs_rewrite": rewrite / batch,
        "batch_reading_ns_per_item": extract / n * 1e9,
        "batch_deciding_ns_per_item": (decide - extract) / n * 1e9,
        "batch_results_ns_per_item": (batch - decide) / n * 1e9,
    }
    print(
        f"{n} items ({outcomes}): rewrite {figures['rewrite_ns_per_item']:.0f} ns/item; "
        f"binding one call at a time {figures['single_call_ns_per_item']:.0f} ns "
        f"({figures['single_vs_rewrite']:.2f}x the rewrite, target >= 1); "
        f"batch {figures['batch_ns_per_item']:.0f} ns ({figures['batch_vs_rewrite']:.1f}x, target >= 20): "
        f"reading the items {figures['batch_reading_ns_per_item']:.0f} ns, deciding "
        f"{figures['batch_deciding_ns_per_item']:.0f} ns, making the Decisions {figures['batch_results_ns_per_item']:.0f} ns"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
