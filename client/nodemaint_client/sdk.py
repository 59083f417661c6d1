"""openstacksdk support: the `NodeMaintenanceEntry` resource and helpers
mirroring the CLI verbs, for an ordinary `openstack.connect(...)`
connection's baremetal proxy. openstacksdk's baremetal proxy cannot be
given new methods from outside, so the helpers take the connection:

    import openstack
    from nodemaint_client import sdk

    conn = openstack.connect(cloud="mycloud")
    entry = sdk.add_maintenance(conn, "myNode", "hardware_failure", reason="Disk 3")
    for e in sdk.list_maintenance(conn, "myNode"):
        print(e.id, e.entry_type, e.reason, e.scope)
    sdk.remove_maintenance(conn, "myNode", entry.id)

Helpers: add_maintenance, list_maintenance, remove_maintenance,
remove_all_maintenance, extend_maintenance, cancel_maintenance.

Each call asks for the microversion it needs (1.116; windows 1.117) and
raises `openstack.exceptions.NotSupported` naming it when the server does
not offer it; the server's refusals are openstacksdk's usual exceptions
(`ConflictException`, `ForbiddenException`, `NotFoundException`, …) with
the server's message.
"""

from urllib.parse import quote

from openstack import exceptions
from openstack import resource
from openstack import utils

#: Typed maintenance entries; maintenance windows.
TYPED = "1.116"
WINDOWS = "1.117"


class NodeMaintenanceEntry(resource.Resource):
    """A maintenance entry of a node (`/v1/nodes/{node_id}/maintenance`)."""

    resources_key = "maintenance"
    base_path = "/nodes/%(node_id)s/maintenance"

    allow_create = True
    allow_list = True
    allow_delete = True
    allow_commit = True
    commit_method = "PATCH"

    _max_microversion = WINDOWS

    #: The node, by name or UUID.
    node_id = resource.URI("node_id")
    #: The entry's UUID.
    id = resource.Body("uuid", alternate_id=True)
    entry_type = resource.Body("type")
    reason = resource.Body("reason")
    extra = resource.Body("extra", type=dict)
    scope = resource.Body("scope")
    asserted_by = resource.Body("asserted_by")
    asserted_by_project = resource.Body("asserted_by_project")
    asserted_at = resource.Body("asserted_at")
    #: Windows (1.117): `active` or `scheduled`, the planned start, the hard end.
    state = resource.Body("state")
    starts_at = resource.Body("starts_at")
    ends_at = resource.Body("ends_at")
    #: Whether the caller may release it, and why not (1.117, in a list).
    releasable = resource.Body("releasable", type=bool)
    releasable_reason = resource.Body("releasable_reason")
    links = resource.Body("links", type=list)


def _proxy(conn, version):
    """The baremetal proxy, once the server is known to offer `version`."""
    proxy = conn.baremetal
    if not utils.supports_microversion(proxy, version):
        maximum = utils.maximum_supported_microversion(proxy, "1.999") or "an older version"
        raise exceptions.NotSupported(
            f"this needs bare metal API microversion {version}; the server offers at most {maximum}"
        )
    return proxy


def _path(node, *rest):
    return "/".join(["/nodes", quote(node, safe=""), "maintenance", *(quote(r, safe="") for r in rest)])


def add_maintenance(conn, node, entry_type, reason=None, extra=None, starts_at=None, ends_at=None):
    """Adds an entry (a window with `ends_at`); the entry as the caller sees it."""
    version = WINDOWS if ends_at is not None else TYPED
    proxy = _proxy(conn, version)
    body = {"type": entry_type}
    for key, value in (("reason", reason), ("extra", extra), ("starts_at", starts_at), ("ends_at", ends_at)):
        if value is not None:
            body[key] = value
    response = proxy.post(_path(node), json=body, microversion=version, raise_exc=False)
    exceptions.raise_from_response(response)
    return NodeMaintenanceEntry.existing(node_id=node, **response.json())


def list_maintenance(conn, node, windows=True):
    """The node's entries (with `windows`, at 1.117: scheduled ones too)."""
    version = WINDOWS if windows else TYPED
    proxy = _proxy(conn, version)
    response = proxy.get(_path(node), microversion=version, raise_exc=False)
    exceptions.raise_from_response(response)
    return [NodeMaintenanceEntry.existing(node_id=node, **e) for e in response.json()["maintenance"]]


def remove_maintenance(conn, node, entry):
    """Releases one active entry (a scheduled window is cancelled with
    `cancel_maintenance`)."""
    proxy = _proxy(conn, TYPED)
    response = proxy.delete(_path(node, entry), microversion=TYPED, raise_exc=False)
    exceptions.raise_from_response(response)


def cancel_maintenance(conn, node, entry):
    """Cancels a window that has not started."""
    proxy = _proxy(conn, WINDOWS)
    response = proxy.delete(_path(node, entry), microversion=WINDOWS, raise_exc=False)
    exceptions.raise_from_response(response)


def remove_all_maintenance(conn, node):
    """Releases every entry of the node, or none (a 403 names every blocker)."""
    proxy = _proxy(conn, TYPED)
    response = proxy.delete(_path(node), microversion=TYPED, raise_exc=False)
    exceptions.raise_from_response(response)


def extend_maintenance(conn, node, entry, ends_at):
    """Moves a window's end later; the window."""
    proxy = _proxy(conn, WINDOWS)
    response = proxy.patch(_path(node, entry), json={"ends_at": ends_at}, microversion=WINDOWS, raise_exc=False)
    exceptions.raise_from_response(response)
    return NodeMaintenanceEntry.existing(node_id=node, **response.json())
