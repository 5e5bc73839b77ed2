#!/usr/bin/env python3
"""Generate oomlint's JSON Schemas (draft 2020-12) from the field tables in `tables/`.

Standard library only. Run from anywhere:

    python3 schema/tools/generate.py          # rewrite schema/*.json
    python3 schema/tools/generate.py --check  # exit 1 if a committed schema is stale

Each schema is self-contained (no `$ref` across files), so a consumer can register it
under its `$id` without resolving anything. The table format is documented in
`schema/tools/README.md`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
TABLES = TOOLS / "tables"
OUT = TOOLS.parent
ID_BASE = "https://oomlint.dev/schema/"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

sys.path.insert(0, str(TOOLS))
from formats import FORMATS  # noqa: E402  (manifest of formats → tables)


class TableError(Exception):
    pass


# ---------------------------------------------------------------- type grammar

_BASE = {
    "int": {"type": "integer"},
    "num": {"type": "number"},
    "str": {"type": "string"},
    "bool": {"type": "boolean"},
    "null": {"type": "null"},
    "obj": {"type": "object"},
    "list": {"type": "array"},
}
_RANGE = re.compile(r"(>=|<=|>|<)(-?[0-9.eE+-]+)")
_RANGE_KEY = {">=": "minimum", ">": "exclusiveMinimum", "<=": "maximum", "<": "exclusiveMaximum"}


def _split(text: str, sep: str) -> list[str]:
    """Split on `sep` outside brackets, braces and quotes."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def parse_alternative(alt: str) -> dict:
    """One alternative of a type expression: int>=1, {a,b}, 'auto', list[str], obj, …"""
    if alt == "any":
        return {}
    if alt.startswith("{") and alt.endswith("}"):
        return {"type": "string", "enum": [v.strip() for v in _split(alt[1:-1], ",")]}
    if alt[0] in "'\"" and alt[-1] == alt[0]:
        return {"const": alt[1:-1]}
    if re.fullmatch(r"-?[0-9.]+", alt):
        return {"const": _number(alt)}
    if alt in ("true", "false"):
        return {"const": alt == "true"}
    m = re.fullmatch(r"list\[(.*)\]", alt)
    if m:
        return {"type": "array", "items": parse_type(m.group(1))}
    m = re.fullmatch(r"map\[(.*)\]", alt)
    if m:
        return {"type": "object", "additionalProperties": parse_type(m.group(1))}
    m = re.match(r"(int|num)(.*)", alt)
    if m and m.group(2):
        schema = dict(_BASE[m.group(1)])
        rest = m.group(2)
        for op, num in _RANGE.findall(rest):
            schema[_RANGE_KEY[op]] = _number(num)
        if _RANGE.sub("", rest):
            raise TableError(f"bad range in {alt!r}")
        return schema
    if alt in _BASE:
        return dict(_BASE[alt])
    raise TableError(f"unknown type {alt!r}")


def parse_type(expr: str) -> dict:
    """A type expression: alternatives separated by '/'."""
    alts = [parse_alternative(a) for a in _split(expr, "/")]
    if len(alts) == 1:
        return alts[0]
    if any(a == {} for a in alts):
        return {}
    plain = [a for a in alts if set(a) == {"type"}]
    if len(plain) == len(alts):
        return {"type": [a["type"] for a in alts]}
    # enum + null folds into one enum with null; everything else becomes anyOf
    enums = [a for a in alts if "enum" in a]
    consts = [a for a in alts if "const" in a]
    others = [a for a in alts if a not in enums and a not in consts]
    if enums and all(a == {"type": "null"} for a in others) and len(enums) == 1:
        values = enums[0]["enum"] + [c["const"] for c in consts]
        return {"type": ["string", "null"] if others else _types_of(values), "enum": values + ([None] if others else [])}
    return {"anyOf": alts}


def _types_of(values: list) -> str | list[str]:
    names = []
    for v in values:
        t = "string" if isinstance(v, str) else "boolean" if isinstance(v, bool) else "integer" if isinstance(v, int) else "number"
        if t not in names:
            names.append(t)
    return names[0] if len(names) == 1 else names


# ---------------------------------------------------------------- tables

class Node:
    """An object under construction: its properties and settings."""

    def __init__(self, schema: dict):
        self.schema = schema
        self.props: dict[str, dict] = {}


def parse_line(line: str, source: str, where: str) -> tuple[str, dict]:
    cols = [c.strip() for c in re.sub(r"\s*\|$", "", line).split(" | ")]
    extra = {}
    if len(cols) >= 5 and cols[-1].startswith("{"):
        extra = json.loads(cols.pop())
    if len(cols) < 4:
        cols += [""] * (4 - len(cols))
    name, type_expr, default, desc = cols[0], cols[1], cols[2], " | ".join(cols[3:])
    prop: dict = {}
    if type_expr not in ("", "-"):
        prop.update(parse_type(type_expr))
    if default not in ("", "-"):
        try:
            prop["default"] = json.loads(default)
        except json.JSONDecodeError as err:
            raise TableError(f"{where}: bad default {default!r}: {err}") from err
    if desc:
        prop["description"] = desc
    if source:
        prop["x-source"] = source
    for key in ("x-removed", "x-deprecated"):
        if key in extra:
            prop["deprecated"] = True
    prop.update(extra)
    return name, prop


def merge(old: dict, new: dict) -> dict:
    """A later table line refines an earlier one: missing parts are kept."""
    if not any(k in new for k in ("type", "enum", "anyOf", "const")) or new.get("x-keep-type"):
        for key in ("type", "enum", "anyOf", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "items"):
            if key in old and key not in new:
                new[key] = old[key]
    new.pop("x-keep-type", None)
    refinement = "description" not in new
    for key in ("description", "x-source", "x-additional", "x-checked"):
        if key in old and (key not in new or (refinement and key == "x-source")):
            new[key] = old[key]
    if "properties" in old and "properties" not in new:
        for key in ("properties", "additionalProperties"):
            if key in old:
                new[key] = old[key]
    return new


def load_tables(names: list[str]) -> Node:
    root = Node({})
    for name in names:
        path = TABLES / f"{name}.tbl"
        stack = [root]
        source = ""
        checked = ""
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.name}:{number}"
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("@source "):
                source = line[len("@source "):].strip()
            elif line.startswith("@checked "):
                checked = line[len("@checked "):].strip()
                checked = "" if checked == "-" else checked
            elif line.startswith("@object "):
                key, prop = parse_line(line[len("@object "):], source, where)
                node = Node(prop)
                previous = stack[-1].props.get(key)
                if previous and "x-node" in previous:
                    node.props = previous["x-node"].props
                    node.schema = merge(previous, prop)
                stack[-1].props[key] = node.schema
                node.schema["x-node"] = node
                stack.append(node)
            elif line == "@end":
                if len(stack) == 1:
                    raise TableError(f"{where}: @end without @object")
                stack.pop()
            elif line.startswith("@additional "):
                stack[-1].schema["x-additional"] = json.loads(line.split(None, 1)[1])
            elif line.startswith("@remove "):
                for key in line.split()[1:]:
                    stack[-1].props.pop(key, None)
            elif line.startswith("@"):
                raise TableError(f"{where}: unknown directive {line.split()[0]}")
            else:
                key, prop = parse_line(line, source, where)
                if checked and "x-checked" not in prop:
                    prop["x-checked"] = checked
                old = stack[-1].props.get(key)
                stack[-1].props[key] = merge(old, prop) if old else prop
        if len(stack) != 1:
            raise TableError(f"{path.name}: unclosed @object")
    return root


def finish(schema: dict) -> dict:
    """Turn an object node into plain JSON Schema, recursively."""
    node = schema.pop("x-node", None)
    additional = schema.pop("x-additional", None)
    if node is not None:
        props = {k: finish(dict(v)) for k, v in node.props.items()}
        if props:
            schema["properties"] = props
        if additional is not None:
            schema["additionalProperties"] = additional
        # an object node whose type allows more than an object keeps its alternatives
        if "type" not in schema and "anyOf" not in schema:
            schema["type"] = "object"
    return schema


def order(prop: dict) -> dict:
    first = ["$schema", "$id", "title", "description", "type", "enum", "const", "anyOf", "items", "minimum",
             "exclusiveMinimum", "maximum", "exclusiveMaximum", "default", "deprecated", "x-removed",
             "x-deprecated", "x-checked", "x-source", "properties", "additionalProperties"]
    out = {k: prop[k] for k in first if k in prop}
    out.update({k: v for k, v in prop.items() if k not in out})
    for key in ("properties", "$defs"):
        if key in out:
            out[key] = {k: order(v) for k, v in out[key].items()}
    for key in ("additionalProperties", "items"):
        if isinstance(out.get(key), dict):
            out[key] = order(out[key])
    if "anyOf" in out:
        out["anyOf"] = [order(a) for a in out["anyOf"]]
    return out


def allow_bool_for_int(schema: dict) -> None:
    """Pydantic's lax mode accepts true/false for int fields: widen `integer` to `integer | boolean`."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "integer" in kinds and "boolean" not in kinds and "enum" not in schema:
        schema["type"] = [*kinds, "boolean"]
    for key in ("properties",):
        for sub in schema.get(key, {}).values():
            allow_bool_for_int(sub)
    for sub in schema.get("anyOf", []):
        allow_bool_for_int(sub)
    if isinstance(schema.get("items"), dict):
        allow_bool_for_int(schema["items"])


def build(fmt: str, spec: dict) -> dict:
    root = load_tables(spec["tables"])
    schema = {
        "$schema": DRAFT,
        "$id": f"{ID_BASE}{fmt}.json",
        "title": spec["title"],
        "description": spec["description"],
        "type": "object",
        "x-framework": spec["framework"],
        "properties": {k: finish(dict(v)) for k, v in root.props.items()},
        "additionalProperties": spec["additional"],
    }
    if spec.get("pydantic_lax_int"):
        for prop in schema["properties"].values():
            allow_bool_for_int(prop)
    for key in spec.get("drop", []):
        schema["properties"].pop(key, None)
    if "extra" in spec:
        schema.update(spec["extra"])
    return order(schema)


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for fmt, spec in FORMATS.items():
        text = render(build(fmt, spec))
        path = OUT / f"{fmt}.json"
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("stale schemas (run schema/tools/generate.py):", ", ".join(stale))
        return 1
    if not check:
        print(f"wrote {len(FORMATS)} schemas to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
