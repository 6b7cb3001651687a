#!/bin/bash
# Reduced from jyngjeon/multiagentsdebate vllm-serve.sh @ 641577e01b61e933576a73fc9e60fb9b45cecd7d
# Dropped: the usage comment.
nohup vllm serve Qwen/Qwen2.5-14B-Instruct \
    --tensor-parallel-size 4 \
    --host 0.0.0.0 \
    --port 8000 \
    --dtype bfloat16 \
    --gpu-memory-utilization 0.90 \
    --max-model-len 16384 > logs/vllm_server_qwen25.log 2>&1 &
