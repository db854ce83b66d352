"""Sightline: a real browser for AI agents.

The wheel installs the `sightline` binary (into the scripts directory, next to
`python`) and this package, a small typed client of it:

- `Env`: the element-index protocol over `sightline env URL` (State Objects out,
  actions in), a context manager that always closes the browser.
- `Client` / `Session`: the HTTP API of `sightline serve`; `Server` runs one.
- `sightline/Browser-v0`: a Gymnasium environment, registered when `gymnasium`
  is installed (`pip install "sightline-….whl[gymnasium]"`).
- `find_binary()`: the path of the binary (`$SIGHTLINE_BIN`, the scripts
  directory, PATH).

Protocol errors raise `ProtocolError` subclasses named after their codes
(`InvalidElementIndex`, `ElementNotInteractive`, `ActionValidationFailed`,
`NavigationFailed`, `InternalBrowserError`), each with `.code` and `.state`.
"""

from __future__ import annotations

import importlib.util

from ._binary import find_binary
from .client import Client, Server, Session
from .env import Action, Env
from .errors import (
    ActionValidationFailed,
    ApiError,
    BinaryNotFound,
    ElementNotInteractive,
    InternalBrowserError,
    InvalidElementIndex,
    NavigationFailed,
    ProcessError,
    ProtocolError,
    SightlineError,
    TaskEnded,
)
from .state import Attributes, Element, ErrorInfo, State, TaskEnd

try:
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("sightline")
    except PackageNotFoundError:  # imported from a source tree
        __version__ = "0+unknown"
except ImportError:  # Python < 3.8
    __version__ = "0+unknown"

__all__ = [
    "Action",
    "ActionValidationFailed",
    "ApiError",
    "Attributes",
    "BinaryNotFound",
    "Client",
    "Element",
    "ElementNotInteractive",
    "Env",
    "ErrorInfo",
    "InternalBrowserError",
    "InvalidElementIndex",
    "NavigationFailed",
    "ProcessError",
    "ProtocolError",
    "Server",
    "Session",
    "SightlineError",
    "State",
    "TaskEnd",
    "TaskEnded",
    "find_binary",
]

# Gymnasium 1.x loads no plugins: an environment id exists once its package is
# imported (as BrowserGym's do). So importing sightline registers
# `sightline/Browser-v0` whenever gymnasium is installed.
if importlib.util.find_spec("gymnasium") is not None:
    from .gym_env import register_envs as _register_envs

    _register_envs()
