#!/usr/bin/env bash
# Launch a 4-GPU SFT run with the caching allocator tuned against fragmentation.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0,1,2,3
# PyTorch >= 2.9 reads PYTORCH_ALLOC_CONF first; older releases read the CUDA name.
export PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True,max_split_size_mb:512"

OMP_NUM_THREADS=8 \
accelerate launch --num_processes 4 \
  train.py --config configs/sft.yaml
