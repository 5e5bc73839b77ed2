"""`python -m oomlint ARGS...` runs the installed `oomlint` binary."""

import os
import subprocess
import sys

from oomlint import find_oomlint_bin


def main() -> int:
    binary = find_oomlint_bin()
    if sys.platform == "win32":
        return subprocess.call([binary, *sys.argv[1:]])
    os.execv(binary, [binary, *sys.argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
