"""oomlint: the `oomlint` binary, shipped in a wheel.

`find_oomlint_bin()` returns the path of the installed binary; `python -m oomlint`
runs it with the given arguments.
"""

import os
import sys
import sysconfig


def find_oomlint_bin() -> str:
    """The `oomlint` executable installed with this package."""
    exe = "oomlint" + (sysconfig.get_config_var("EXE") or "")
    candidates = [
        os.path.join(sysconfig.get_path("scripts"), exe),
        os.path.join(sysconfig.get_path("scripts", vars={"base": sys.base_prefix}), exe),
    ]
    user_scheme = sysconfig.get_preferred_scheme("user") if hasattr(sysconfig, "get_preferred_scheme") else None
    if user_scheme:
        candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), exe))
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise FileNotFoundError("the oomlint binary is not installed next to this Python package: " + ", ".join(candidates))
