"""Which tables make up each schema. Later tables refine earlier ones (same key: the later line wins,
keeping the earlier type/description when it leaves them out)."""

TA = ["transformers-training-args"]
TRL_COMMON = ["accelerate-launch-args", *TA, "trl-base", "trl-model", "trl-script"]

_TRL_DESC = (
    "Flat YAML for `trl {cmd} --config file.yaml`: every key is a field of ScriptArguments, {cfg} (which extends "
    "transformers TrainingArguments), ModelConfig or DatasetMixtureConfig, plus `env`, `accelerate_config`, and "
    "`accelerate launch` flags that the trl CLI forwards to the launcher. Unknown keys are forwarded too, and the "
    "launcher rejects them."
)


def _trl(cmd: str, cfg: str) -> dict:
    return {
        "framework": "trl",
        "title": f"TRL {cmd.upper()} config (trl {cmd})",
        "description": _TRL_DESC.format(cmd=cmd, cfg=cfg),
        "tables": [*TRL_COMMON, f"trl-{cmd}"],
        "additional": False,
    }


def _litgpt(script: str, title: str) -> dict:
    required = ["model_name"] if script == "pretrain" else ["checkpoint_dir"]
    return {
        "framework": "litgpt",
        "title": title,
        "description": f"YAML for `litgpt {script} --config file.yaml`: the top-level keys are the parameters of "
        f"`setup()` in the script; `train`, `eval` and `log` are nested dataclasses; `data` and `optimizer` take a "
        "short name or a jsonargparse `class_path`/`init_args` mapping. jsonargparse rejects unknown keys.",
        "tables": ["litgpt-common", f"litgpt-{script.replace('finetune_', '').replace('_', '-')}"],
        "additional": False,
        "extra": {"required": required},
    }


FORMATS = {
    "litgpt-lora": _litgpt("finetune_lora", "LitGPT LoRA/QLoRA fine-tuning config (litgpt finetune_lora)"),
    "litgpt-adapter": _litgpt("finetune_adapter", "LitGPT Adapter fine-tuning config (litgpt finetune_adapter)"),
    "litgpt-adapter-v2": _litgpt("finetune_adapter_v2", "LitGPT Adapter v2 fine-tuning config (litgpt finetune_adapter_v2)"),
    "litgpt-full": _litgpt("finetune_full", "LitGPT full fine-tuning config (litgpt finetune_full)"),
    "litgpt-pretrain": _litgpt("pretrain", "LitGPT pretraining config (litgpt pretrain)"),
    "trl-sft": _trl("sft", "SFTConfig"),
    "trl-dpo": _trl("dpo", "DPOConfig"),
    "trl-grpo": _trl("grpo", "GRPOConfig"),
    "transformers": {
        "framework": "transformers",
        "title": "transformers TrainingArguments",
        "description": "Keys of transformers `TrainingArguments` as written in YAML/JSON and parsed by HfArgumentParser "
        "(parse_yaml_file / parse_json_file reject unknown keys unless allow_extra_keys). Checked against transformers "
        "5.24; keys removed since 4.57 are listed as deprecated with x-removed.",
        "tables": TA,
        "additional": False,
    },
    "axolotl": {
        "framework": "axolotl",
        "title": "Axolotl training config",
        "description": "Axolotl YAML (`axolotl train config.yml`), validated by the pydantic model AxolotlInputConfig. "
        "Pydantic ignores unknown keys, so extra keys are allowed; known keys are described here.",
        "tables": ["axolotl"],
        "additional": True,
        "pydantic_lax_int": True,
        "extra": {"required": ["base_model"]},
    },
    "llamafactory": {
        "framework": "llamafactory",
        "title": "LLaMA-Factory training config (llamafactory-cli train)",
        "description": "YAML for `llamafactory-cli train|chat|export|eval`: the union of ModelArguments, DataArguments, "
        "TrainingArguments (transformers Seq2SeqTrainingArguments plus LLaMA-Factory additions), FinetuningArguments and "
        "GeneratingArguments. HfArgumentParser.parse_dict rejects unknown keys unless ALLOW_EXTRA_ARGS=1.",
        "tables": [*TA, "transformers-seq2seq", "llamafactory"],
        "additional": False,
    },
    "accelerate": {
        "framework": "accelerate",
        "title": "accelerate config YAML (accelerate launch --config_file)",
        "description": "Config file read by `accelerate launch`. Unknown top-level keys raise a ValueError when the file "
        "is loaded; `distributed_type` is required. Nested blocks (fsdp_config, deepspeed_config, …) are copied onto "
        "the launcher arguments.",
        "tables": ["accelerate"],
        "additional": False,
        "extra": {"required": ["distributed_type"]},
    },
    "deepspeed": {
        "framework": "deepspeed",
        "title": "DeepSpeed JSON config",
        "description": "DeepSpeed configuration (ds_config.json). Top-level keys are read one by one (unknown ones are "
        "ignored), but `zero_optimization` and its offload blocks are pydantic models with extra=forbid. Under the HF "
        "Trainer/TRL/Axolotl, \"auto\" values are filled from TrainingArguments.",
        "tables": ["deepspeed"],
        "additional": True,
    },
    "oomlint": {
        "framework": "oomlint",
        "title": "oomlint project configuration",
        "description": "Settings in `oomlint.toml` or under `[tool.oomlint]` in `pyproject.toml`.",
        "tables": ["oomlint"],
        "additional": False,
    },
}
