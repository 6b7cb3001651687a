#!/bin/bash
# Reduced from XuanofXXX/LLM4PeoplesDaily scripts/vllm/qwen2.5_7B.sh @ 899f63510aab04161c826ff71c4e9723b4d33402
# Dropped: nothing.

export CUDA_VISIBLE_DEVICES=${1:-0}
vllm serve /media/public/models/huggingface/Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization 0.95
