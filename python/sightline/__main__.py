"""`python -m sightline ARGS…` runs the installed binary with ARGS (as `sightline ARGS…` does)."""

from __future__ import annotations

import os
import sys

from ._binary import find_binary


def main() -> None:
    binary = find_binary()
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
