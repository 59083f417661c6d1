"""Requests to the typed maintenance API at the microversion each needs.

python-ironicclient negotiates one version for a session and, when a
server refuses a version (406), retries at an older one. For the typed
paths an older version means a path that does not exist, so these requests
go out at exactly the version they need, through the same authenticated
session (keystoneauth's adapter, bypassing ironicclient's retry), and a
server without it is told to the user in one line.
"""

import json
from urllib.parse import quote

from keystoneauth1 import adapter
from osc_lib import exceptions

#: Typed maintenance entries (the node maintenance spec).
TYPED = "1.116"
#: Maintenance windows: start and end times, state, extend, the estate listing.
WINDOWS = "1.117"

_NEEDS = {TYPED: "typed maintenance", WINDOWS: "maintenance windows"}


def _message(response):
    """The server's message in Ironic's error body, else the status line."""
    try:
        inner = json.loads(response.json()["error_message"])
        text = inner.get("faultstring") or inner.get("description")
        if text:
            return text
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    return f"HTTP {response.status_code} {response.reason or ''}".strip()


def request(baremetal, method, path, version, body=None, params=None):
    """One request at `version`; the decoded JSON body (None when empty).

    Any refusal is an `osc_lib.exceptions.CommandError` whose text is the
    server's own message, so the command prints one line and exits 1.
    """
    http = baremetal.http_client
    headers = {"X-OpenStack-Ironic-API-Version": version, "Accept": "application/json"}
    kwargs = {"raise_exc": False, "headers": headers}
    if body is not None:
        kwargs["json"] = body
    if params:
        kwargs["params"] = params
    response = adapter.Adapter.request(http, path, method, **kwargs)
    if response.status_code == 406:
        maximum = response.headers.get("X-OpenStack-Ironic-API-Maximum-Version", "an older version")
        raise exceptions.CommandError(
            f"this needs bare metal API microversion {version} ({_NEEDS.get(version, 'this feature')}); "
            f"the server offers at most {maximum}"
        )
    if response.status_code >= 400:
        raise exceptions.CommandError(_message(response))
    if not response.content:
        return None
    return response.json()


def node_path(node, *rest):
    """`/v1/nodes/{node}/maintenance[/…]`, each segment percent-encoded."""
    return "/".join(["/v1/nodes", quote(node, safe=""), "maintenance", *(quote(r, safe="") for r in rest)])
