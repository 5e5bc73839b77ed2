#!/usr/bin/env python3
"""Regenerates server/oomlint-core/src/format/openrlhf/flags.tsv from an OpenRLHF git directory.

Usage: python3 schema/tools/openrlhf_flags.py PATH/TO/OpenRLHF/.git NEW OLD > server/oomlint-core/src/format/openrlhf/flags.tsv

NEW is the release with the dotted flag groups (`--actor.model_name_or_path`, commit 3c3be62),
OLD the last release with underscore flags (`--pretrain`, tag v0.8.0). Python standard library
and `git` only: each trainer's `openrlhf/cli/<program>.py` is read with `ast`, and every
`parser.add_argument("--flag", ..., default=...)` (or `action="store_true"`) gives a default.
Each row is one plan field of one program:

    program <TAB> field <TAB> new flag <TAB> its default <TAB> old flag <TAB> its default

A flag the release does not have is `-`; a default of None is `None`.
"""

import ast
import subprocess
import sys

PROGRAMS = ["train_ppo_ray", "train_sft", "train_dpo", "train_rm"]

# field, new flag, old flag; per program where they differ.
COMMON = [
    ("zero_stage", "ds.zero_stage", "zero_stage"),
    ("adam_offload", "ds.adam_offload", "adam_offload"),
    ("packing", "ds.packing_samples", "packing_samples"),
    ("lora_rank", "ds.lora.rank", "lora_rank"),
    ("lora_alpha", "ds.lora.alpha", "lora_alpha"),
    ("param_dtype", "ds.param_dtype", "-"),
    ("bf16", "-", "bf16"),
    ("ring_attn_size", "ds.ring_attn_size", "ring_attn_size"),
    ("micro_batch", "train.micro_batch_size", "micro_train_batch_size"),
    ("batch", "train.batch_size", "train_batch_size"),
    ("max_len", "data.max_len", "max_len"),
]
TRAINER = [
    ("model", "model.model_name_or_path", "pretrain"),
    ("checkpointing", "model.gradient_checkpointing_enable", "gradient_checkpointing"),
]
PPO = [
    ("model", "actor.model_name_or_path", "pretrain"),
    ("checkpointing", "actor.gradient_checkpointing_enable", "gradient_checkpointing"),
    ("actor_nodes", "actor.num_nodes", "actor_num_nodes"),
    ("actor_gpus", "actor.num_gpus_per_node", "actor_num_gpus_per_node"),
    ("ref_nodes", "ref.num_nodes", "ref_num_nodes"),
    ("ref_gpus", "ref.num_gpus_per_node", "ref_num_gpus_per_node"),
    ("critic_nodes", "critic.num_nodes", "critic_num_nodes"),
    ("critic_gpus", "critic.num_gpus_per_node", "critic_num_gpus_per_node"),
    ("reward_nodes", "reward.num_nodes", "reward_num_nodes"),
    ("reward_gpus", "reward.num_gpus_per_node", "reward_num_gpus_per_node"),
    ("critic_model", "critic.model_name_or_path", "critic_pretrain"),
    ("reward_model", "reward.model_name_or_path", "reward_pretrain"),
    ("remote_rm", "reward.remote_url", "remote_rm_url"),
    ("agent", "train.agent_func_path", "agent_func_path"),
    ("colocate_all", "train.colocate_all", "colocate_all_models"),
    ("colocate_actor_ref", "train.colocate_actor_ref", "colocate_actor_ref"),
    ("colocate_critic_reward", "train.colocate_critic_reward", "colocate_critic_reward"),
    ("vllm_engines", "vllm.num_engines", "vllm_num_engines"),
    ("vllm_tp", "vllm.tensor_parallel_size", "vllm_tensor_parallel_size"),
    ("vllm_memory", "vllm.gpu_memory_utilization", "vllm_gpu_memory_utilization"),
    ("vllm_sleep", "vllm.enable_sleep", "vllm_enable_sleep"),
    ("async", "train.async_enable", "async_train"),
    ("rollout_batch", "rollout.batch_size", "rollout_batch_size"),
    ("rollout_micro", "rollout.micro_batch_size", "micro_rollout_batch_size"),
    ("n_samples", "rollout.n_samples_per_prompt", "n_samples_per_prompt"),
    ("estimator", "algo.advantage.estimator", "advantage_estimator"),
    ("init_kl", "algo.kl.init_coef", "init_kl_coef"),
    ("prompt_max_len", "-", "prompt_max_len"),
    ("max_new_tokens", "rollout.max_new_tokens", "generate_max_len"),
    ("ds_tp", "ds.tensor_parallel_size", "ds_tensor_parallel_size"),
    ("ref_offload", "ref.offload", "ref_offload"),
    ("dynamic_batch", "train.dynamic_batch_enable", "use_dynamic_batch"),
    ("max_tokens_per_gpu", "train.max_tokens_per_gpu", "train_max_tokens_per_gpu"),
    ("partial_rollout", "train.partial_rollout_enable", "-"),
    ("generate_batch", "rollout.vllm_generate_batch_size", "-"),
    ("eval_dataset", "eval.dataset", "eval_dataset"),
    ("dynamic_filtering", "algo.dynamic_filtering_enable", "-"),
    ("dynamic_filtering_range", "algo.dynamic_filtering_range", "-"),
    ("max_images", "data.max_images_per_prompt", "-"),
]
DPO = [("ref_offload", "ref.offload", "ref_offload")]


def defaults(git_dir, rev, program):
    source = subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{rev}:openrlhf/cli/{program}.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
            continue
        if not node.args or not isinstance(node.args[0], ast.Constant):
            continue
        name = str(node.args[0].value)
        if not name.startswith("--"):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        if "default" in kw:
            value = ast.unparse(kw["default"])
        elif isinstance(kw.get("action"), ast.Constant) and kw["action"].value == "store_true":
            value = "False"
        else:
            value = "None"
        found[name[2:]] = value.strip("'\"")
    return found


def main():
    git_dir, new, old = sys.argv[1:4]
    short = subprocess.run(
        ["git", "--git-dir", git_dir, "rev-parse", "--short=7", new], check=True, capture_output=True, text=True
    ).stdout.strip()
    print(f"# OpenRLHF {short} (dotted flags) and {old} (underscore flags); generated by schema/tools/openrlhf_flags.py")
    print("# defaults of `parser.add_argument` in openrlhf/cli/<program>.py of each release")
    for program in PROGRAMS:
        fields = COMMON + (PPO if program == "train_ppo_ray" else TRAINER + (DPO if program == "train_dpo" else []))
        new_defaults, old_defaults = defaults(git_dir, new, program), defaults(git_dir, old, program)
        for field, new_flag, old_flag in fields:
            row = [program, field]
            for flag, table in ((new_flag, new_defaults), (old_flag, old_defaults)):
                if flag in table:
                    row += [flag, table[flag]]
                else:
                    row += ["-", "-"]
            if row[2] == "-" and row[4] == "-":
                continue
            print("\t".join(row))


if __name__ == "__main__":
    main()
