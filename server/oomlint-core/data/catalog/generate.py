#!/usr/bin/env python3
"""Build `server/oomlint-core/data/models.json` from the tables in this folder.

Standard library only, no network. Run from anywhere:

    python3 server/oomlint-core/data/catalog/generate.py          # rewrite models.json
    python3 server/oomlint-core/data/catalog/generate.py --check  # exit 1 when it is stale

The table format is documented in `README.md` next to this script. A row gives either
Hugging Face `config.json` fields (mapped the way `catalog/local/hf.rs` maps a local
config) or, under `arch.*` columns, the catalog's own fields (LitGPT `Config` terms); the
`arch.*` cells are applied last.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "models.json"

ROW_KEYS = ("hf_id", "name", "aliases", "family", "parameters", "parameters_source", "citation")
# Architecture fields in output order, with the value that leaves a field out.
FIELDS = (
    ("name", None),
    ("hf_id", None),
    ("aliases", None),
    ("family", None),
    ("n_layer", None),
    ("n_embd", None),
    ("n_head", None),
    ("n_query_groups", None),
    ("head_size", None),
    ("intermediate_size", None),
    ("mlp", None),
    ("n_expert", 0),
    ("n_expert_per_token", 0),
    ("moe_intermediate_size", None),
    ("shared_expert_intermediate_size", None),
    ("shared_expert_gate", False),
    ("n_dense_layers", 0),
    ("vocab_size", None),
    ("padded_vocab_size", None),
    ("tie_word_embeddings", None),
    ("bias", None),
    ("attn_bias", False),
    ("lm_head_bias", False),
    ("norm", None),
    ("norm_qk", False),
    ("attn_output_gate", False),
    ("mla", None),
    ("post_attention_norm", False),
    ("post_mlp_norm", False),
    ("attention_logit_softcapping", None),
    ("final_logit_softcapping", None),
    ("parallel_residual", False),
    ("shared_attention_norm", False),
    ("hf_projections", "separate"),
    ("block_size", None),
    ("sliding_window_size", None),
    ("sliding_window_layers", None),
    ("n_mamba_layers", 0),
    ("mamba", None),
    ("parallel_mamba", False),
    ("layer_pattern", None),
    ("ungated_experts", False),
    ("tower_parameters", 0),
    ("global_attention", None),
    ("per_layer_input", None),
    ("n_kv_shared_layers", 0),
    ("double_wide_mlp", False),
    ("altup", None),
    ("parameters", None),
    ("source", None),
)
REQUIRED = {"name", "hf_id", "aliases", "family", "n_layer", "n_embd", "n_head", "n_query_groups", "head_size"}
REQUIRED |= {"intermediate_size", "mlp", "vocab_size", "padded_vocab_size", "tie_word_embeddings", "bias", "norm"}
REQUIRED |= {"block_size", "source"}
MLA_FIELDS = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
MAMBA_FIELDS = (
    "kind", "d_state", "n_heads", "head_dim", "n_groups", "d_conv", "expand", "chunk_size", "conv_bias", "proj_bias", "dt_rank"
)
# Groups of `arch.<group>.<field>` columns and their fields, in output order.
GROUPS = {
    "mamba": MAMBA_FIELDS,
    "mla": MLA_FIELDS,
    "global_attention": ("head_size", "n_query_groups", "k_eq_v"),
    "per_layer_input": ("size", "vocab_size"),
    "altup": ("n_inputs", "laurel_rank"),
}


class TableError(Exception):
    pass


# ------------------------------------------------------------------ table reading


# Columns whose cells stay strings even when they look like numbers.
STRING_COLUMNS = {"arch.sliding_window_layers", "arch.layer_pattern", "layer_types", *ROW_KEYS} - {"parameters"}


def parse_value(text: str, column: str = ""):
    """A cell: integer, float, `true`/`false`, a JSON list/object, else a string."""
    if column in STRING_COLUMNS:
        return text
    if text in ("true", "false"):
        return text == "true"
    if text[:1] in "[{":
        return json.loads(text)
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_table(path: Path) -> list[dict]:
    """Rows of one table: `# comment`, `@set key=value…` (defaults for the rows below), a
    header line, then one tab-separated row per model."""
    rows, header, defaults = [], None, {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        where = f"{path.name}:{number}"
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if cells[0] == "@set":
            for cell in cells[1:]:
                key, sep, value = cell.partition("=")
                if not sep:
                    raise TableError(f"{where}: `@set` cell without `=`: {cell!r}")
                if value:
                    defaults[key] = parse_value(value, key)
                else:
                    defaults.pop(key, None)
            continue
        if header is None:
            header = cells
            continue
        if len(cells) > len(header):
            raise TableError(f"{where}: {len(cells)} cells, header has {len(header)}")
        row = dict(defaults)
        row.update({key: parse_value(cell, key) for key, cell in zip(header, cells) if cell != ""})
        row["_where"] = where
        rows.append(row)
    return rows


# ------------------------------------------------------------ config.json mapping

# `model_type` → the kind `catalog/local/hf.rs` maps it as.
KINDS = {
    "llama": "llama",
    "granite": "llama",
    "smollm3": "llama",
    "olmo2": "olmo2",
    "mistral": "mistral",
    "ministral3": "mistral",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3_moe",
    "mixtral": "mixtral",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3": "gemma3",
    "gemma3_text": "gemma3",
    "phi": "phi",
    "phi3": "phi3",
    "gpt_neox": "gpt_neox",
    "falcon": "falcon",
    "granitemoehybrid": "granite_hybrid",
    "gpt_oss": "gpt_oss",
}
TIES_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "falcon"}


def first(config: dict, keys, default=None):
    for key in keys:
        if key in config:
            return config[key]
    return default


def require(config: dict, keys, where: str):
    value = first(config, keys)
    if value is None:
        raise TableError(f"{where}: none of {keys} given")
    return value


def from_config(config: dict, where: str) -> dict:
    """The architecture a Hugging Face `config.json` describes (as `hf.rs` reads it)."""
    model_type = config.get("model_type", "")
    kind = KINDS.get(model_type)
    if kind is None:
        raise TableError(f"{where}: model_type {model_type!r} is not mapped")
    n_embd = require(config, ("hidden_size", "n_embd", "d_model"), where)
    n_head = require(config, ("num_attention_heads", "n_head"), where)
    if kind == "falcon":
        n_groups = falcon_kv_heads(config, n_head)
    else:
        n_groups = config.get("num_key_value_heads", n_head)
    vocab = require(config, ("vocab_size",), where)
    arch = {
        "n_layer": require(config, ("num_hidden_layers", "n_layer"), where),
        "n_embd": n_embd,
        "n_head": n_head,
        "n_query_groups": max(n_groups, 1),
        "head_size": config.get("head_dim") or n_embd // n_head,
        "intermediate_size": first(config, ("intermediate_size", "ffn_hidden_size"), 4 * n_embd),
        "vocab_size": vocab,
        "padded_vocab_size": vocab,
        "block_size": first(config, ("max_position_embeddings", "n_positions", "seq_length"), 2048),
        "tie_word_embeddings": config.get("tie_word_embeddings", kind in TIES_BY_DEFAULT),
        "hf_projections": {"phi3": "fused-qkv-gate-up", "gpt_neox": "fused-qkv", "falcon": "fused-qkv"}.get(
            kind, "separate"
        ),
    }
    apply_family(arch, config, kind)
    apply_sliding_window(arch, config, kind)
    return arch


def falcon_kv_heads(config: dict, n_head: int) -> int:
    if config.get("new_decoder_architecture") is True:
        return first(config, ("num_kv_heads", "n_head_kv"), n_head)
    return 1 if config.get("multi_query", True) else n_head


def apply_family(arch: dict, config: dict, kind: str) -> None:
    arch.update(norm="rms-norm", mlp="swiglu", bias=False)
    attention_bias = config.get("attention_bias", False)
    if kind in ("llama", "mistral", "phi3"):
        arch["attn_bias"] = attention_bias
        arch["bias"] = config.get("mlp_bias", False) and attention_bias
    elif kind == "olmo2":
        # q/k norms span all heads in OLMo 2; counted per head (a few thousandths of a percent).
        arch.update(attn_bias=attention_bias, norm_qk=True)
    elif kind == "qwen2":
        arch["attn_bias"] = True
    elif kind == "qwen3":
        arch.update(attn_bias=attention_bias, norm_qk=True)
    elif kind == "qwen3_moe":
        arch.update(attn_bias=attention_bias, norm_qk=True)
        set_moe(arch, config, ("num_experts",), config.get("moe_intermediate_size"))
    elif kind == "mixtral":
        set_moe(arch, config, ("num_local_experts",), None)
    elif kind == "gemma":
        arch["mlp"] = "geglu"
    elif kind in ("gemma2", "gemma3"):
        arch.update(mlp="geglu", post_attention_norm=True, post_mlp_norm=True, norm_qk=kind == "gemma3")
        arch["attention_logit_softcapping"] = config.get("attn_logit_softcapping")
        arch["final_logit_softcapping"] = config.get("final_logit_softcapping")
    elif kind == "phi":
        arch.update(mlp="gelu", norm="layer-norm", bias=True, lm_head_bias=True)
        arch.update(parallel_residual=True, shared_attention_norm=True)
    elif kind == "gpt_neox":
        arch.update(mlp="gelu", norm="layer-norm", bias=True)
        arch["parallel_residual"] = config.get("use_parallel_residual", True)
    elif kind == "falcon":
        arch.update(mlp="gelu", norm="layer-norm", bias=config.get("bias", False))
        arch["parallel_residual"] = config.get("parallel_attn", True)
        two_norms = config.get("new_decoder_architecture") is True and config.get("num_ln_in_parallel_attn", 2) == 2
        arch["shared_attention_norm"] = arch["parallel_residual"] and not two_norms
    elif kind == "granite_hybrid":
        apply_granite_hybrid(arch, config)
    elif kind == "gpt_oss":
        arch["bias"] = config.get("attention_bias", True)
        set_moe(arch, config, ("num_local_experts",), None)
        arch["n_expert_per_token"] = first(config, ("num_experts_per_tok", "experts_per_token"), 0)


def set_moe(arch: dict, config: dict, count_keys, expert_size) -> None:
    experts = first(config, count_keys, 0)
    if not experts:
        return
    arch.update(mlp="moe", n_expert=experts, n_expert_per_token=config.get("num_experts_per_tok", 0))
    arch["moe_intermediate_size"] = expert_size


def apply_granite_hybrid(arch: dict, config: dict) -> None:
    types = config.get("layer_types")
    arch["n_mamba_layers"] = arch["n_layer"] if types is None else sum(t == "mamba" for t in layer_list(types))
    if arch["n_mamba_layers"]:
        expand = config.get("mamba_expand", 2)
        n_heads = max(config.get("mamba_n_heads", 128), 1)
        arch["mamba"] = {
            "d_state": config.get("mamba_d_state", 256),
            "n_heads": n_heads,
            "head_dim": config.get("mamba_d_head", expand * arch["n_embd"] // n_heads),
            "n_groups": config.get("mamba_n_groups", 1),
            "d_conv": config.get("mamba_d_conv", 4),
            "expand": expand,
            "chunk_size": config.get("mamba_chunk_size", 256),
            "conv_bias": config.get("mamba_conv_bias", True),
            "proj_bias": config.get("mamba_proj_bias", False),
        }
    shared = config.get("shared_intermediate_size", 1024)
    experts = config.get("num_local_experts", 8)
    if experts:
        arch.update(mlp="moe", n_expert=experts, n_expert_per_token=config.get("num_experts_per_tok", 2))
        arch["moe_intermediate_size"] = arch["intermediate_size"]
        arch["shared_expert_intermediate_size"] = shared
    arch["intermediate_size"] = shared


def layer_list(types) -> list[str]:
    """`layer_types` as a list, or as a compact string: one letter per layer (`A` full
    attention, `S` sliding attention, `M` mamba)."""
    if isinstance(types, list):
        return types
    letters = {"A": "full_attention", "S": "sliding_attention", "M": "mamba"}
    return [letters[letter] for letter in types]


def apply_sliding_window(arch: dict, config: dict, kind: str) -> None:
    window = config.get("sliding_window")
    if kind in ("qwen2", "qwen3", "qwen3_moe"):
        enabled = config.get("use_sliding_window") is True
    else:
        enabled = kind in ("mistral", "mixtral", "phi3", "gemma2", "gemma3", "gpt_oss")
    if window is None or not enabled:
        return
    arch["sliding_window_size"] = window
    n_layer = arch["n_layer"]
    types = config.get("layer_types")
    if types is not None and len(layer_list(types)) == n_layer:
        pattern = "".join("1" if "sliding" in t else "0" for t in layer_list(types))
    elif kind == "gemma2":
        pattern = "".join("1" if i % 2 == 0 else "0" for i in range(n_layer))
    elif kind == "gemma3":
        every = max(config.get("sliding_window_pattern", 6), 1)
        pattern = "".join("0" if (i + 1) % every == 0 else "1" for i in range(n_layer))
    else:
        pattern = None
    if pattern is not None and "0" in pattern:
        arch["sliding_window_layers"] = pattern


# ------------------------------------------------------------------ entries


def entry(row: dict) -> dict:
    where = row["_where"]
    config = {k: v for k, v in row.items() if k not in ROW_KEYS and not k.startswith(("arch.", "_"))}
    overrides = {k[len("arch.") :]: v for k, v in row.items() if k.startswith("arch.")}
    arch = from_config(config, where) if config else {}
    for key, value in overrides.items():
        group, dot, field = key.partition(".")
        if dot and group in GROUPS:
            arch.setdefault(group, {})[field] = value
        else:
            arch[key] = value
    if "hf_id" not in row:
        raise TableError(f"{where}: no hf_id")
    name = row.get("name", row["hf_id"].rsplit("/", 1)[-1])
    citation = row.get("citation")
    if not citation:
        raise TableError(f"{where}: no citation")
    citation = citation.replace("{name}", name).replace("{hf_id}", row["hf_id"])
    parameters = row.get("parameters")
    how = row.get("parameters_source")
    if parameters is not None and not how:
        raise TableError(f"{where}: `parameters` without `parameters_source`")
    arch.update(
        name=name,
        hf_id=row["hf_id"],
        aliases=[a for a in str(row.get("aliases", "")).split(",") if a],
        family=row.get("family") or config.get("model_type"),
        parameters=parameters,
        source=f"{citation}; parameters: {how or 'computed from shapes'}",
    )
    for group, fields in GROUPS.items():
        if group in arch:
            unknown = sorted(set(arch[group]) - set(fields))
            if unknown:
                raise TableError(f"{where}: {name}: unknown {group} fields {unknown}")
            arch[group] = {k: arch[group][k] for k in fields if k in arch[group]}
    missing = sorted(k for k in REQUIRED if arch.get(k) is None)
    if missing:
        raise TableError(f"{where}: {name}: no {', '.join(missing)}")
    known = {k for k, _ in FIELDS}
    unknown = sorted(set(arch) - known)
    if unknown:
        raise TableError(f"{where}: {name}: unknown fields {unknown}")
    return {k: arch[k] for k, omit in FIELDS if k in arch and arch[k] != omit and arch[k] is not None}


def build() -> str:
    tables = sorted(HERE.glob("*.tsv"))
    if not tables:
        raise TableError(f"no *.tsv tables in {HERE}")
    entries = [entry(row) for table in tables for row in read_table(table)]
    seen = {}
    for e in entries:
        for key in [e["name"], e["hf_id"], *e["aliases"]]:
            key = key.lower()
            if seen.setdefault(key, e["name"]) != e["name"]:
                raise TableError(f"`{key}` names both {seen[key]} and {e['name']}")
    return json.dumps(entries, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    try:
        text = build()
    except TableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is stale: run python3 {Path(__file__).relative_to(HERE.parents[3])}", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.name}: {text.count(chr(10) + '  {')} models")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
