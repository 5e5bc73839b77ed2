"""Reading a fixture's launch script as the shell would, for verl_validate.py and
openrlhf_validate.py: line continuations joined, comments skipped, variables assigned in the
script expanded (`$VAR`, `${VAR}`); a variable the script never sets makes the fixture not
runnable (its value is only known at run time)."""

import re
import shlex


class NotRunnable(Exception):
    """A step that cannot run on CPU (or without the model's files); no verdict."""


ASSIGNMENT = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S*)$")


def command_lines(text, expand_values):
    """Each logical line that is neither blank, a comment nor an assignment, with the variables
    assigned above it. With `expand_values`, an assigned value is unquoted and expanded as it is
    assigned; otherwise it is kept as written."""
    joined = re.sub(r"\\\r?\n", " ", text)
    env = {}
    for raw in joined.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = ASSIGNMENT.match(line)
        if m:
            value = m.group(2)
            if expand_values:
                value = expand(shlex.split(value)[0] if value else "", env)
            env[m.group(1)] = value
            continue
        yield line, env


def expand(word, env):
    def sub(m):
        name = m.group(1) or m.group(2)
        if name not in env:
            raise NotRunnable(f"`${name}` is not set by the script (the value is only known at run time)")
        return env[name]

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, word)
