"""nodemaint from Python: the node maintenance spec's authority model and
its operations, built from the same Rust code as ``nodemaint serve``.

The pure model needs no database::

    from nodemaint import Caller, Node, Entry, release_decision

    node = Node(name="myNode", owner="9c84d2e0f1a3", lessee="a0a0a0a0a0a0")
    hold = Entry("hardware_failure", "system", asserted_by="op-admin")
    lessee = Caller.project("u1", "a0a0a0a0a0a0", ["admin"])
    d = release_decision(lessee, node, hold)
    d.allowed, d.status, d.message
    # (False, 403, 'Cannot release maintenance entry ... not permitted at lessee scope')

The operations run on Ironic's database, each one transaction::

    from nodemaint import Maintenance
    m = Maintenance("sqlite:///var/lib/ironic/ironic.sqlite")
    entry = m.add(Caller.system("op", ["admin"]), "myNode", "operator_hold", reason="Row C power")
    m.remove(Caller.system("op", ["admin"]), "myNode", entry["uuid"])
"""

from . import errors
from ._native import (
    Caller,
    Decision,
    Entry,
    Event,
    Maintenance,
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
from .errors import (
    BadRequest,
    ConfigError,
    Conflict,
    DatabaseError,
    Forbidden,
    InternalError,
    NodemaintError,
    NotFound,
    ServiceUnavailable,
)

__all__ = [
    "BadRequest",
    "Caller",
    "ConfigError",
    "Conflict",
    "DatabaseError",
    "Decision",
    "Entry",
    "Event",
    "Forbidden",
    "InternalError",
    "Maintenance",
    "Node",
    "NodemaintError",
    "NotFound",
    "Policy",
    "ServiceUnavailable",
    "bulk_release_decision",
    "derive_scope",
    "entry_types",
    "errors",
    "mask",
    "release_decision",
    "release_decisions",
    "synthesised_reason",
]
