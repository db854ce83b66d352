"""Sightline's errors as exceptions.

Two families:

- `ProtocolError`: a State Object came back with an `error` (the element-index
  protocol's codes: `INVALID_ELEMENT_INDEX`, `ELEMENT_NOT_INTERACTIVE`,
  `ACTION_VALIDATION_FAILED`, `NAVIGATION_FAILED`, `INTERNAL_BROWSER_ERROR`).
  One subclass per code; `.code` is the wire string and `.state` the State
  Object that carried it (the previous state, unchanged).
- `ApiError`: `sightline serve` answered `{"error": {"code", "message", "detail"}}`
  with an HTTP status (`session_not_found`, `capability_expired`, `busy`, …).

`SightlineError` is the base of both and of the process-level errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Type

if TYPE_CHECKING:
    from .state import State


class SightlineError(Exception):
    """Every error this package raises."""


class BinaryNotFound(SightlineError):
    """The `sightline` binary is not installed where this package looks."""


class ProcessError(SightlineError):
    """The `sightline` process ended or misbehaved (exit status and its last stderr lines)."""

    def __init__(self, message: str, returncode: Optional[int] = None, stderr: str = ""):
        detail = f"{message} (exit status {returncode})" if returncode is not None else message
        if stderr.strip():
            detail += "\n--- sightline stderr (last lines) ---\n" + stderr.rstrip()
        super().__init__(detail)
        self.returncode = returncode
        self.stderr = stderr


class TaskEnded(SightlineError):
    """An action was sent after `finish_task` / `fail_task` ended the session."""


class ProtocolError(SightlineError):
    """A State Object with an `error`: the action was refused or failed, the page is as it was."""

    code: str = ""

    def __init__(self, code: str, message: str, failed_action: Any = None, state: Optional["State"] = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.failed_action = failed_action
        self.state = state


class InvalidElementIndex(ProtocolError):
    code = "INVALID_ELEMENT_INDEX"


class ElementNotInteractive(ProtocolError):
    code = "ELEMENT_NOT_INTERACTIVE"


class ActionValidationFailed(ProtocolError):
    code = "ACTION_VALIDATION_FAILED"


class NavigationFailed(ProtocolError):
    code = "NAVIGATION_FAILED"


class InternalBrowserError(ProtocolError):
    code = "INTERNAL_BROWSER_ERROR"


PROTOCOL_ERRORS: Dict[str, Type[ProtocolError]] = {
    cls.code: cls
    for cls in (InvalidElementIndex, ElementNotInteractive, ActionValidationFailed, NavigationFailed, InternalBrowserError)
}


def protocol_error(code: str, message: str, failed_action: Any = None, state: Optional["State"] = None) -> ProtocolError:
    """The exception for one protocol error code (`ProtocolError` itself for a code this version does not know)."""
    cls = PROTOCOL_ERRORS.get(code, ProtocolError)
    return cls(code, message, failed_action, state)


class ApiError(SightlineError):
    """`sightline serve` refused a request: HTTP status, error code, message, detail."""

    def __init__(self, status: int, code: str, message: str, detail: Any = None):
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.detail = detail
