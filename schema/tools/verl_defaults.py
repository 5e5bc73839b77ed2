#!/usr/bin/env python3
"""Regenerates server/oomlint-core/src/format/verl/defaults.tsv from a verl checkout.

Usage: python3 schema/tools/verl_defaults.py PATH/TO/verl [COMMIT] > server/oomlint-core/src/format/verl/defaults.tsv

Python standard library only. For the PPO trainers it reads the config Hydra composes, which verl
itself flattens into `verl/trainer/config/_generated_ppo_trainer.yaml` and
`_generated_ppo_megatron_trainer.yaml` (`scripts/generate_trainer_config.sh`); for the SFT trainer
it composes `sft_trainer.yaml` with its defaults list (`group: option` loads `group/option.yaml`
under `group`, then `_self_`). Every leaf becomes one row:

    config <TAB> dotted.key <TAB> value as written (YAML plain text, a flow list, or ${...})

Lists of scalars are written in flow style (`[0.9, 0.999]`); interpolations are kept for the
reader to resolve (OmegaConf `${a.b}`, `${.sibling}`, `${oc.select:a.b,default}`). The first
lines are `#` comments naming the release and the files read.
"""

import os
import sys

CONFIGS = [
    ("ppo_trainer", "_generated_ppo_trainer.yaml"),
    ("ppo_megatron_trainer", "_generated_ppo_megatron_trainer.yaml"),
    ("sft_trainer", "sft_trainer.yaml"),
]


def strip_comment(line):
    """The line without a trailing `# comment` outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def parse(text):
    """The block YAML subset verl's config files use: nested mappings, scalar lists, flow values."""
    lines = []
    for raw in text.splitlines():
        line = strip_comment(raw)
        if line.strip():
            lines.append((len(line) - len(line.lstrip(" ")), line.strip()))
    root = {}
    # (indent of the key that opened it, mapping or list, (parent, key) that holds it)
    stack = [(-1, root, None)]
    last = None  # (container, key) of the last scalar, for continuation lines
    for indent, content in lines:
        while len(stack) > 1 and indent <= stack[-1][0]:
            stack.pop()
        parent = stack[-1][1]
        if content.startswith("- ") or content == "-":
            item = content[2:].strip()
            if isinstance(parent, dict) and not parent and stack[-1][2]:
                # The first item of a list indented under its key.
                holder, key = stack[-1][2]
                parent = holder[key] = []
                stack[-1] = (stack[-1][0], parent, None)
            elif isinstance(parent, dict):
                # A list whose items sit at the key's own indentation.
                key = next(reversed(parent))
                if not isinstance(parent[key], list):
                    parent[key] = []
                parent = parent[key]
                stack.append((indent, parent, None))
            parent.append(item if ": " not in item else "{...}")
            last = None
            continue
        key, sep, value = content.partition(":")
        if not sep or (value and not value.startswith(" ")) or not isinstance(parent, dict):
            # A plain scalar continued on the next line.
            if last is not None:
                container, k = last
                container[k] = container[k] + " " + content
            continue
        key, value = key.strip("'\""), value.strip()
        if value == "":
            child = {}
            parent[key] = child
            stack.append((indent, child, (parent, key)))
            last = None
        else:
            parent[key] = value
            last = (parent, key)
    return root


def scalar_list(items):
    return "[" + ", ".join(items) + "]"


def rows(tree, prefix=""):
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            if value:
                yield from rows(value, path + ".")
            else:
                yield path, "{}"
        elif isinstance(value, list):
            yield path, scalar_list(value)
        else:
            yield path, value


def compose(config_dir, name):
    """A config file with its defaults list applied (groups first, then the file: `_self_` last)."""
    with open(os.path.join(config_dir, name), encoding="utf-8") as f:
        tree = parse(f.read())
    defaults = tree.pop("defaults", [])
    composed = {}
    for entry in defaults if isinstance(defaults, list) else []:
        if entry == "_self_" or ": " not in entry:
            continue
        group, option = (s.strip() for s in entry.split(": ", 1))
        with open(os.path.join(config_dir, group, option + ".yaml"), encoding="utf-8") as f:
            composed[group] = parse(f.read())
    merge(composed, tree)
    return composed


def merge(into, tree):
    for key, value in tree.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    checkout = sys.argv[1]
    commit = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    with open(os.path.join(checkout, "verl", "version", "version"), encoding="utf-8") as f:
        version = f.read().strip()
    config_dir = os.path.join(checkout, "verl", "trainer", "config")
    print(f"# verl {version} (commit {commit}); generated by schema/tools/verl_defaults.py")
    for config, file in CONFIGS:
        print(f"# {config}: verl/trainer/config/{file}")
    for config, file in CONFIGS:
        tree = compose(config_dir, file)
        for key, value in rows(tree):
            print(f"{config}\t{key}\t{value}")


if __name__ == "__main__":
    main()
