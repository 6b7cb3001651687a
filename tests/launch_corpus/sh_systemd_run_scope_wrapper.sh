#!/bin/bash
# Reduced from pbseiya/vllm-tb250-mining-rig start_vllm_4096.sh @ 4ca4033287309544bda3825c1e0f60c97844a51c
# Dropped: echo banners, library path exports.

export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export VLLM_WORKER_MULTIPROC_METHOD=spawn
export VLLM_USE_V1=1

source /home/user/vllm-env/bin/activate

systemd-run --user --scope -p MemoryMax=90% \
    python3 -m vllm.entrypoints.openai.api_server \
    --model Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8 \
    --tensor-parallel-size 8 \
    --gpu-memory-utilization 0.85 \
    --max-model-len 4096 \
    --max-num-seqs 32 \
    --trust-remote-code \
    --port 8000
