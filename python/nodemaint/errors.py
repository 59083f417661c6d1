"""The exceptions nodemaint raises.

Every error of the library is a :class:`NodemaintError` carrying ``code``,
the HTTP status the REST API (``nodemaint serve``) answers with, and
``message``, the one line it sends::

    try:
        m.remove(caller, "myNode", uuid)
    except nodemaint.Forbidden as e:
        print(e.code, e.message)  # 403 Cannot release maintenance entry ...

Bad arguments from Python (a wrong type, an unknown scope) are the
built-in ``TypeError`` or ``ValueError`` instead, naming the argument.
"""


class NodemaintError(Exception):
    """Any error of the library: ``code`` (HTTP status) and ``message``."""

    code = 500

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class BadRequest(NodemaintError):
    """400: the request is malformed (an unknown type, ``extra`` not an object, bad times)."""

    code = 400


class Forbidden(NodemaintError):
    """403: policy or the release floors refuse it; the message names every blocker."""

    code = 403


class NotFound(NodemaintError):
    """404: no such node (or one the caller may not see), no such entry."""

    code = 404


class Conflict(NodemaintError):
    """409: an identical entry is active, a window overlaps, or a window has started."""

    code = 409


class ServiceUnavailable(NodemaintError):
    """503: the database (or the bus) is unreachable, lost the connection, or
    the change lost to others every time it was retried. Nothing was written,
    unless the message says the commit's outcome is unknown; trying again
    later may succeed."""

    code = 503


class DatabaseError(NodemaintError):
    """500: the database refused the work (no nodemaint schema, a missing
    privilege, any other failure). Nothing was written."""

    code = 500


class ConfigError(NodemaintError, ValueError):
    """A bad database URL or configuration file (also a ``ValueError``)."""

    code = 500


class InternalError(NodemaintError):
    """A defect inside nodemaint (a Rust panic), caught at the boundary."""

    code = 500
