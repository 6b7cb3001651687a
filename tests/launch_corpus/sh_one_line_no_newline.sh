#!/bin/bash
# Reduced from XuanofXXX/LLM4PeoplesDaily scripts/vllm/qwen3_32B.sh @ 899f63510aab04161c826ff71c4e9723b4d33402
# Dropped: nothing (no final newline kept).

export CUDA_VISIBLE_DEVICES=1,2,3,4
vllm serve /media/public/models/huggingface/Qwen/Qwen3-32B/ --gpu-memory-utilization 0.95 --tensor-parallel-size 4