"""The spec's commands, as python-ironicclient's OSC plugin loads them
(entry-point group `openstack.baremetal.v1`): under both `baremetal` and
`openstack baremetal`.

Every command shows what the server answered: no rule of the server's is
repeated here, so a refusal (403 with every blocker, 409 naming the other
entry, 404) is the server's own words.
"""

import json

from osc_lib import exceptions
from osc_lib.command import command

from nodemaint_client import api

#: The spec's table (Scenario 2).
COLUMNS = ("UUID", "Type", "Reason", "Scope")
#: `--long` adds who asserted each and when, and the window fields (1.117).
LONG_COLUMNS = COLUMNS + (
    "Asserted By",
    "Asserted By Project",
    "Asserted At",
    "Starts At",
    "Ends At",
    "State",
    "Releasable",
)
FIELD = {
    "UUID": "uuid",
    "Type": "type",
    "Reason": "reason",
    "Scope": "scope",
    "Asserted By": "asserted_by",
    "Asserted By Project": "asserted_by_project",
    "Asserted At": "asserted_at",
    "Starts At": "starts_at",
    "Ends At": "ends_at",
    "State": "state",
    "Releasable": "releasable",
    "Node": "node_name",
    "Node UUID": "node_uuid",
    "Ended At": "ended_at",
    "Ended By": "ended_by",
    "Marker": "marker",
}


def _row(entry, columns):
    return tuple(entry.get(FIELD[c]) for c in columns)


def _show(entry):
    """An entry as a ShowOne's (names, values): every field the server sent."""
    fields = [k for k in entry if k != "links"]
    return fields, [entry[k] for k in fields]


class AddMaintenance(command.ShowOne):
    """Add a typed maintenance entry to a node, at the scope your credentials give.

    A window when --end is given: held until then (scheduled from --start
    if that is later than now), released by the server's tick.

    Example:
      openstack baremetal node maintenance add myNode --type hardware_failure --reason "Disk 3 has bad sectors"
      openstack baremetal node maintenance add rack1-n01 --type operator_hold --reason "Row C power" \\
          --start 2030-06-01T22:00:00Z --end 2030-06-02T02:00:00Z
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("node", metavar="<node>", help="Name or UUID of the node.")
        parser.add_argument("--type", metavar="<type>", required=True, help="Entry type, e.g. hardware_failure or operator_hold.")
        parser.add_argument("--reason", metavar="<reason>", help="Why the node is held.")
        parser.add_argument("--extra", metavar="<json>", help="A JSON object of per-type metadata.")
        parser.add_argument("--start", metavar="<time>", help="A window's start (RFC 3339, or +30m / +2h / +1d); needs --end.")
        parser.add_argument("--end", metavar="<time>", help="A window's end (RFC 3339, or +30m / +2h / +1d).")
        return parser

    def take_action(self, parsed_args):
        body = {"type": parsed_args.type}
        if parsed_args.reason is not None:
            body["reason"] = parsed_args.reason
        if parsed_args.extra is not None:
            try:
                body["extra"] = json.loads(parsed_args.extra)
            except ValueError as e:
                raise exceptions.CommandError(f"--extra is not JSON: {e}")
        if parsed_args.start is not None and parsed_args.end is None:
            raise exceptions.CommandError("--start needs --end: a window has a hard end")
        version = api.TYPED
        if parsed_args.end is not None:
            version = api.WINDOWS
            body["ends_at"] = parsed_args.end
            if parsed_args.start is not None:
                body["starts_at"] = parsed_args.start
        baremetal = self.app.client_manager.baremetal
        entry = api.request(baremetal, "POST", api.node_path(parsed_args.node), version, body=body)
        return _show(entry)


class ListMaintenance(command.Lister):
    """List a node's maintenance entries as your credentials see them.

    --long adds who asserted each and when, the windows' times and state
    (scheduled windows included) and whether you may release each.

    Example:
      openstack baremetal node maintenance list myNode
      openstack baremetal node maintenance list myNode --long -f json
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("node", metavar="<node>", help="Name or UUID of the node.")
        parser.add_argument("--long", action="store_true", help="Show every field, scheduled windows included.")
        return parser

    def take_action(self, parsed_args):
        version = api.WINDOWS if parsed_args.long else api.TYPED
        columns = LONG_COLUMNS if parsed_args.long else COLUMNS
        baremetal = self.app.client_manager.baremetal
        answer = api.request(baremetal, "GET", api.node_path(parsed_args.node), version)
        return columns, [_row(e, columns) for e in answer["maintenance"]]


class RemoveMaintenance(command.Command):
    """Release maintenance entries of a node: some by UUID, or --all (all or none).

    Example:
      openstack baremetal node maintenance remove myNode 3c1a7b90-5a4e-4a8e-9e55-3f0c2b1d7a66
      openstack baremetal node maintenance remove myNode --all
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("node", metavar="<node>", help="Name or UUID of the node.")
        parser.add_argument("entries", metavar="<entry-uuid>", nargs="*", help="UUIDs of the entries to release.")
        parser.add_argument("--all", action="store_true", help="Release every entry, or none if any is not yours to release.")
        return parser

    def take_action(self, parsed_args):
        if parsed_args.all == bool(parsed_args.entries):
            raise exceptions.CommandError("give entry UUIDs or --all, not both and not neither")
        baremetal = self.app.client_manager.baremetal
        if parsed_args.all:
            api.request(baremetal, "DELETE", api.node_path(parsed_args.node), api.TYPED)
            return
        for uuid in parsed_args.entries:
            api.request(baremetal, "DELETE", api.node_path(parsed_args.node, uuid), api.TYPED)


class ExtendMaintenance(command.ShowOne):
    """Move a maintenance window's end later (never earlier: end it early with remove).

    Example:
      openstack baremetal node maintenance extend rack1-n01 3c1a7b90-5a4e-4a8e-9e55-3f0c2b1d7a66 --end +2h
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("node", metavar="<node>", help="Name or UUID of the node.")
        parser.add_argument("entry", metavar="<entry-uuid>", help="UUID of the window.")
        parser.add_argument("--end", metavar="<time>", required=True, help="The new end (RFC 3339, or +30m / +2h / +1d).")
        return parser

    def take_action(self, parsed_args):
        baremetal = self.app.client_manager.baremetal
        path = api.node_path(parsed_args.node, parsed_args.entry)
        entry = api.request(baremetal, "PATCH", path, api.WINDOWS, body={"ends_at": parsed_args.end})
        return _show(entry)


class CancelMaintenance(command.Command):
    """Cancel a maintenance window that has not started (end an active one with remove).

    Example:
      openstack baremetal node maintenance cancel rack1-n01 3c1a7b90-5a4e-4a8e-9e55-3f0c2b1d7a66
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("node", metavar="<node>", help="Name or UUID of the node.")
        parser.add_argument("entry", metavar="<entry-uuid>", help="UUID of the scheduled window.")
        return parser

    def take_action(self, parsed_args):
        baremetal = self.app.client_manager.baremetal
        listed = api.request(baremetal, "GET", api.node_path(parsed_args.node), api.WINDOWS)
        found = [e for e in listed["maintenance"] if e.get("uuid") == parsed_args.entry]
        if found and found[0].get("state") != "scheduled":
            raise exceptions.CommandError(
                f"maintenance entry {parsed_args.entry} is active, not scheduled: end it with "
                f"`openstack baremetal node maintenance remove {parsed_args.node} {parsed_args.entry}`"
            )
        # Not found is the server's 404 to tell, in its words.
        api.request(baremetal, "DELETE", api.node_path(parsed_args.node, parsed_args.entry), api.WINDOWS)


class ListWindows(command.Lister):
    """List the maintenance windows you may see across the estate, following the server's pages.

    Example:
      openstack baremetal maintenance list
      openstack baremetal maintenance list --state ended --since=-7d -f json
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--state", metavar="<states>", help="active, scheduled, ended (comma-separated); default active,scheduled.")
        parser.add_argument("--since", metavar="<time>", help="Ended windows only since this time (RFC 3339, or --since=-7d for a week ago).")
        parser.add_argument("--limit", metavar="<count>", type=int, help="At most this many rows (default: all, page by page).")
        parser.add_argument("--marker", metavar="<marker>", help="Continue after this row's marker.")
        return parser

    def take_action(self, parsed_args):
        if parsed_args.limit is not None and parsed_args.limit < 1:
            raise exceptions.CommandError("--limit must be a positive number")
        baremetal = self.app.client_manager.baremetal
        params = {k: v for k, v in (("state", parsed_args.state), ("since", parsed_args.since), ("marker", parsed_args.marker)) if v}
        if parsed_args.limit:
            params["limit"] = parsed_args.limit
        rows = []
        path = "/v1/maintenance"
        while True:
            answer = api.request(baremetal, "GET", path, api.WINDOWS, params=params)
            rows.extend(answer["windows"])
            following = answer.get("next")
            if not following or (parsed_args.limit and len(rows) >= parsed_args.limit):
                break
            # The next link carries every parameter (the resolved `since` too).
            path, params = "/v1/maintenance?" + following.split("?", 1)[1], None
        if parsed_args.limit:
            rows = rows[: parsed_args.limit]
        columns = ("Node", "UUID", "Type", "State", "Scope", "Starts At", "Asserted At", "Ends At", "Ended At", "Ended By", "Marker")
        return columns, [_row(r, columns) for r in rows]
