#!/bin/bash
# Reduced from WohimLee/vLLM-Tutorial 6.openai_server/src/launch_vllm.sh @ ed98be1d1289aa4e6f9af78e609841accab12ae0
# Dropped: the commented-out second command.
python -m vllm.entrypoints.openai.api_server \
  --model models/Qwen3-8B \
  --max-model-len 8192 \
  --gpu-memory-utilization 0.85 \
  --max-num-seqs 64 \
  --tensor-parallel-size 1 \
  --port 8000
