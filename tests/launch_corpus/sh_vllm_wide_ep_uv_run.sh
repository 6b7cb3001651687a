#!/bin/bash
# Reduced from vllm-project/vllm examples/online_serving/wide_ep/launch_server.sh @ f17f1697223a6824dbde2116d31393291ed4ec63
# Dropped: comments, the license header, some exports and flags.
set -euo pipefail

COORDINATOR_IP=${COORDINATOR_IP:-}
START_RANK=${START_RANK:-}

COORDINATOR_PORT=13345
DATA_PARALLEL_SIZE=32
DATA_PARALLEL_SIZE_LOCAL=8
MAX_MODEL_LEN=16384
MODEL="deepseek-ai/DeepSeek-V3-0324"

if [[ -z "$COORDINATOR_IP" || -z "$START_RANK" ]]; then
    echo "Error: set COORDINATOR_IP and START_RANK"
    exit 1
fi

export VLLM_USE_DEEP_GEMM=1
export VLLM_ALL2ALL_BACKEND=deepep_low_latency
export VLLM_SKIP_P2P_CHECK=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export GLOO_SOCKET_IFNAME=eth0

uv run vllm serve "$MODEL" \
  --data-parallel-hybrid-lb \
  --data-parallel-address "$COORDINATOR_IP" \
  --data-parallel-rpc-port "$COORDINATOR_PORT" \
  --tensor-parallel-size 1 \
  --data-parallel-size "$DATA_PARALLEL_SIZE" \
  --data-parallel-size-local "$DATA_PARALLEL_SIZE_LOCAL" \
  --data-parallel-start-rank "$START_RANK" \
  --enable-expert-parallel \
  --max-model-len "$MAX_MODEL_LEN" \
  --compilation_config '{"custom_ops":["+rms_norm"],"cudagraph_mode":"FULL_DECODE_ONLY"}' \
  --kv-transfer-config '{"kv_connector":"DecodeBenchConnector","kv_role":"kv_both"}'
