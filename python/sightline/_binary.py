"""Where the `sightline` binary is: $SIGHTLINE_BIN, the scripts directory the wheel
installed it into, or PATH."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from typing import List, Optional

from .errors import BinaryNotFound

EXE = "sightline.exe" if sys.platform == "win32" else "sightline"


def _candidates() -> List[str]:
    dirs: List[str] = []
    # The wheel's .data/scripts entry lands in the scripts directory of the scheme pip used:
    # the venv's (or system's) bin/, or the user scheme's with `pip install --user`.
    dirs.append(sysconfig.get_path("scripts"))
    user_scheme = "nt_user" if os.name == "nt" else ("osx_framework_user" if sys.platform == "darwin" else "posix_user")
    try:
        dirs.append(sysconfig.get_path("scripts", scheme=user_scheme))
    except KeyError:
        pass
    # The interpreter's own directory (a venv's bin/ when sysconfig points elsewhere).
    dirs.append(os.path.dirname(sys.executable))
    return [os.path.join(d, EXE) for d in dirs if d]


def find_binary(explicit: Optional[str] = None) -> str:
    """The path of the `sightline` binary.

    Order: `explicit`, then `$SIGHTLINE_BIN`, then the Python scripts directories
    (where `pip install sightline-….whl` put it), then `sightline` on PATH.
    """
    for given in (explicit, os.environ.get("SIGHTLINE_BIN")):
        if given:
            if os.path.isfile(given) and os.access(given, os.X_OK):
                return given
            raise BinaryNotFound(f"{given!r} (from {'the binary argument' if given == explicit else '$SIGHTLINE_BIN'}) is not an executable file")
    for path in _candidates():
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    on_path = shutil.which(EXE)
    if on_path:
        return on_path
    raise BinaryNotFound(
        "the sightline binary was not found in the Python scripts directory, $SIGHTLINE_BIN or PATH; "
        "install the wheel (pip install sightline-VERSION-py3-none-PLATFORM.whl) or set SIGHTLINE_BIN"
    )
