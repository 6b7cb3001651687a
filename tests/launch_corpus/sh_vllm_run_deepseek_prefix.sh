#!/bin/bash
# Reduced from vllm-project/vllm examples/online_serving/run_deepseek.sh @ 7c73342e9980665e210e6c86d43ed1737bdd8485
# Dropped: comments, steps 1-2 (docker pull, the ray head and worker containers), the docker exec line.

VLLM_USE_V1=1 python3 -m vllm.entrypoints.openai.api_server \
    --model /path/to/the/model/in/the/container \
    --tensor-parallel-size 8 \
    --pipeline-parallel-size 2 \
    --gpu-memory-utilization 0.92 \
    --dtype auto \
    --distributed-executor-backend ray \
    --served-model-name deepseekv3 \
    --max-num-seqs 40 \
    --max-model-len 16384 \
    --enable-chunked-prefill \
    --enable-prefix-caching \
    --trust-remote-code
