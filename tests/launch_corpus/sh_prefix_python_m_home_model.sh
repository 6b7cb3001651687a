#!/bin/bash
# Reduced from lijiawei20161002/password_locking local_inference_setup/serve.sh @ 92df009c113e47e0e491c3a264d14fbec7c52821
# Dropped: a commented-out command.
CUDA_VISIBLE_DEVICES=1 python -m vllm.entrypoints.openai.api_server \
  --model $HOME/models/DeepSeek-R1-Distill-Qwen-1.5B \
  --max-model-len 2048 \
  --gpu-memory-utilization 0.9 \
  --port 9000
