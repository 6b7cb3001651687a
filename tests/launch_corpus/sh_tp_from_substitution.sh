#!/bin/bash
# Reduced from Mengfanzhe0127/cot_rec cot/script/vllm/Qwen2.5-7B-Instruct.sh @ 4eebf6d9905f927a032fd47fce216cc23524ddda
# Dropped: the commented-out flags.
GPU_ID=$1
GPU_COUNT=$(echo "$GPU_ID" | awk -F',' '{print NF}')

model=/media/public/models/huggingface/Qwen/Qwen2.5-7B-Instruct

CUDA_VISIBLE_DEVICES=${GPU_ID} vllm serve ${model} \
  --port "$2" \
  --tensor-parallel-size "${GPU_COUNT}" \
  --swap-space 0 --gpu-memory-utilization 0.95 \
  --disable-log-requests \
  --disable-frontend-multiprocessing --seed 42
