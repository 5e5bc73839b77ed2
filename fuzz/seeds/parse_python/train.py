from trl import SFTConfig, SFTTrainer
args = SFTConfig(output_dir="out", per_device_train_batch_size=4, bf16=True, gradient_checkpointing=True)
trainer = SFTTrainer(model="Qwen/Qwen2.5-7B", args=args)
