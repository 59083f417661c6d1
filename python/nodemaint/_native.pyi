"""Type stubs for nodemaint's native module (built from Rust with PyO3).

Times are ``datetime`` (naive means UTC) or strings as the REST API takes
them: RFC 3339 (``2026-12-05T22:00:00Z``) or ``+30m`` / ``+2h`` / ``+1d``
from now. Views returned by ``Maintenance`` are plain dicts and lists, the
REST API's JSON bodies.
"""

from datetime import datetime
from os import PathLike
from typing import Any, List, Literal, Optional, Sequence, Tuple, Union, final

_Time = Union[datetime, str]
_Scope = Literal["system", "owner", "lessee"]
_EventKind = Literal["asserted", "updated", "released", "scheduled", "started", "extended", "cancelled", "expired"]

@final
class Caller:
    """Who is asking: a token's user, project (None: system scope) and roles.

    >>> Caller.project("u1", "a0a0a0a0a0a0", ["admin"]).roles
    ['admin', 'manager', 'member', 'reader']
    """

    def __init__(
        self,
        user_id: str,
        project_id: Optional[str] = None,
        roles: Sequence[str] = (),
        *,
        system_scope: Optional[bool] = None,
        request_id: Optional[str] = None,
    ) -> None: ...
    @staticmethod
    def system(user_id: str, roles: Sequence[str]) -> Caller:
        """A system-scoped caller: ``Caller.system("op", ["admin"])``."""
    @staticmethod
    def project(user_id: str, project_id: str, roles: Sequence[str]) -> Caller:
        """A project-scoped caller: ``Caller.project("u1", "9c84d2e0f1a3", ["member"])``."""
    @staticmethod
    def noauth() -> Caller:
        """The caller of every request under ``auth_strategy = noauth``."""
    @property
    def user_id(self) -> str: ...
    @property
    def project_id(self) -> Optional[str]: ...
    @property
    def roles(self) -> List[str]: ...
    @property
    def system_scope(self) -> bool: ...
    @property
    def request_id(self) -> Optional[str]: ...

@final
class Node:
    """A node: ``Node(name="myNode", owner="9c84d2e0f1a3", lessee=None)`` (a new uuid unless given)."""

    def __init__(
        self,
        uuid: Optional[str] = None,
        name: Optional[str] = None,
        owner: Optional[str] = None,
        lessee: Optional[str] = None,
    ) -> None: ...
    @property
    def uuid(self) -> Optional[str]: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def owner(self) -> Optional[str]: ...
    @property
    def lessee(self) -> Optional[str]: ...

@final
class Entry:
    """An active entry: ``Entry("operator_hold", "owner", "alice", "9c84d2e0f1a3")``.

    The project is ``""`` for a system entry; uuid and asserted_at default to new values.
    """

    def __init__(
        self,
        type: str,
        scope: _Scope,
        asserted_by: str,
        asserted_by_project: str = "",
        *,
        reason: Optional[str] = None,
        uuid: Optional[str] = None,
        asserted_at: Optional[_Time] = None,
        ends_at: Optional[_Time] = None,
        extra: Optional[dict[str, Any]] = None,
    ) -> None: ...
    @property
    def uuid(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def reason(self) -> Optional[str]: ...
    @property
    def asserted_by(self) -> str: ...
    @property
    def asserted_by_project(self) -> str: ...
    @property
    def asserted_at(self) -> datetime: ...
    @property
    def ends_at(self) -> Optional[datetime]: ...
    def to_dict(self) -> dict[str, Any]:
        """The entry object as the REST API shows it to a system reader."""

@final
class Event:
    """A maintenance event: ``Event("released", entry, caller).text()`` is its node history text."""

    def __init__(
        self,
        kind: _EventKind,
        entry: Entry,
        actor: Caller,
        *,
        note: Optional[str] = None,
        at: Optional[_Time] = None,
    ) -> None: ...
    @property
    def kind(self) -> str: ...
    @property
    def entry_uuid(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def reason(self) -> Optional[str]: ...
    @property
    def asserted_by(self) -> str: ...
    @property
    def asserted_by_project(self) -> str: ...
    @property
    def actor(self) -> str: ...
    @property
    def actor_project(self) -> str: ...
    @property
    def note(self) -> Optional[str]: ...
    @property
    def at(self) -> datetime: ...
    def text(self) -> str:
        """The node history text, from the renderer the database writers use."""

@final
class Policy:
    """Ironic's defaults and the spec's rules, overridden by an oslo.policy file.

    >>> Policy.from_text('"baremetal:node:maintenance:remove": "role:admin"')
    """

    def __new__(cls, *, enforce_scope: bool = True) -> Policy: ...
    @staticmethod
    def load(path: Union[str, PathLike[str]], *, enforce_scope: bool = True) -> Policy:
        """The defaults overridden by a YAML or JSON policy file (ConfigError when unreadable)."""
    @staticmethod
    def from_text(text: str, *, enforce_scope: bool = True) -> Policy:
        """The defaults overridden by a policy file's text."""
    @property
    def enforce_scope(self) -> bool: ...
    @property
    def unknown_rules(self) -> List[str]: ...
    def enforce(self, rule: str, caller: Caller, node: Node, entry: Optional[Entry] = None) -> bool:
        """Whether ``rule`` lets ``caller`` act on ``node`` (and ``entry``)."""

@final
class Decision:
    """``allowed``, else the HTTP ``status`` and the REST API's ``message``; truthy when allowed."""

    @property
    def allowed(self) -> bool: ...
    @property
    def status(self) -> Optional[int]: ...
    @property
    def message(self) -> Optional[str]: ...
    def __bool__(self) -> bool: ...

def derive_scope(caller: Caller, node: Node, *, enforce_scope: bool = True) -> Optional[_Scope]:
    """The caller's scope on the node (system > owner > lessee), or None.

    >>> derive_scope(Caller.project("u", "own", ["member"]), Node(owner="own"))
    'owner'
    """

def release_decision(caller: Caller, node: Node, entry: Entry, policy: Optional[Policy] = None) -> Decision:
    """What ``DELETE /v1/nodes/{node}/maintenance/{uuid}`` answers (404, 403 or allowed).

    >>> release_decision(Caller.project("u", "les", ["admin"]), Node(lessee="les"), Entry("operator_hold", "system", "op")).status
    403
    """

def bulk_release_decision(
    caller: Caller, node: Node, entries: Sequence[Entry], policy: Optional[Policy] = None
) -> Decision:
    """What ``DELETE /v1/nodes/{node}/maintenance`` answers: all or nothing, every blocker named."""

def release_decisions(items: Sequence[Tuple[Caller, Node, Entry]], policy: Optional[Policy] = None) -> List[Decision]:
    """``release_decision`` for many items in one call: ``release_decisions([(caller, node, entry), ...])``."""

def mask(item: Union[Entry, Event], caller: Caller, node: Node, *, enforce_scope: bool = True) -> Any:
    """The entry or event as ``caller`` may see it: identities above its scope are ``******``.

    >>> mask(Entry("operator_hold", "system", "op"), Caller.project("u", "les", ["reader"]), Node(lessee="les")).asserted_by
    '******'
    """

def synthesised_reason(entries: Sequence[Entry]) -> Optional[str]:
    """The deprecated ``maintenance_reason`` the entries give: ``"hardware_failure: Disk 3; operator_hold"``."""

def entry_types() -> List[dict[str, Any]]:
    """The registered types: ``[{"name": "legacy", "reserved": True, ...}, ...]``."""

@final
class Maintenance:
    """The REST API's operations on a database, each one transaction.

    >>> m = Maintenance("postgresql+psycopg2://ironic@db/ironic")
    >>> m.add(Caller.system("op", ["admin"]), "myNode", "operator_hold", reason="Row C power")["scope"]
    'system'

    Blocking calls that release the GIL; one handle may be shared by threads.
    Errors are ``nodemaint.NodemaintError`` subclasses with ``code`` and ``message``.
    """

    def __init__(self, url: str, policy: Optional[Policy] = None, *, max_connections: Optional[int] = None) -> None: ...
    def list(self, caller: Caller, node: str) -> List[dict[str, Any]]:
        """The node's active entries and scheduled windows: ``m.list(caller, "myNode")``."""
    def add(
        self,
        caller: Caller,
        node: str,
        type: str,
        *,
        reason: Optional[str] = None,
        extra: Optional[dict[str, Any]] = None,
        starts_at: Optional[_Time] = None,
        ends_at: Optional[_Time] = None,
    ) -> dict[str, Any]:
        """Asserts an entry at the caller's scope: ``m.add(caller, "myNode", "hardware_failure", reason="Disk 3")``."""
    def schedule(
        self,
        caller: Caller,
        node: str,
        type: str,
        starts_at: _Time,
        ends_at: _Time,
        *,
        reason: Optional[str] = None,
        extra: Optional[dict[str, Any]] = None,
    ) -> dict[str, Any]:
        """A window: ``m.schedule(caller, "myNode", "operator_hold", "+1d", "+1d4h", reason="Row C")``."""
    def remove(self, caller: Caller, node: str, uuid: str) -> dict[str, Any]:
        """Releases one entry (cancels a window that has not started): ``m.remove(caller, "myNode", uuid)``."""
    def remove_all(self, caller: Caller, node: str) -> List[dict[str, Any]]:
        """Releases every entry, all or nothing: ``m.remove_all(caller, "myNode")``."""
    def set(self, caller: Caller, node: str, reason: Optional[str] = None) -> dict[str, Any]:
        """The legacy boolean's PUT: ``m.set(caller, "myNode", "rebalancing rack")``."""
    def unset(self, caller: Caller, node: str) -> List[dict[str, Any]]:
        """The legacy boolean's DELETE (releases everything, all or nothing)."""
    def extend(self, caller: Caller, node: str, uuid: str, ends_at: _Time) -> dict[str, Any]:
        """Moves a window's end later: ``m.extend(caller, "myNode", uuid, "+4h")``."""
    def cancel(self, caller: Caller, node: str, uuid: str) -> dict[str, Any]:
        """Cancels a window that has not started: ``m.cancel(caller, "myNode", uuid)``."""
    def node(self, caller: Caller, node: str) -> dict[str, Any]:
        """The node as the REST API shows it: ``m.node(caller, "myNode")["maintenance"]``."""
    def history(self, caller: Caller, node: str, limit: int = 100) -> List[dict[str, Any]]:
        """The node's history, oldest first, masked for the caller."""
    def close(self) -> None:
        """Closes the pool's connections."""

def _panic_for_tests() -> None:
    """Panics inside Rust, for the boundary's tests: raises ``InternalError``."""

def _bench_extract(items: Sequence[Tuple[Caller, Node, Entry]]) -> int:
    """For python/bench/decisions.py: reads the items as ``release_decisions`` does, nothing else."""

def _bench_decide(items: Sequence[Tuple[Caller, Node, Entry]], policy: Optional[Policy] = None) -> int:
    """For python/bench/decisions.py: reads and decides, makes no ``Decision``; returns how many are allowed."""
