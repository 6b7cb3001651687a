#!/bin/bash
# Reduced from dagnaputra/nlp scripts/serve_7b_model.sh @ 41a5ccc95090be43214ea40c1badbd63629d6a9e
# Dropped: nothing (the API key value replaced).
docker run -d --runtime nvidia --gpus all \
    -v ~/.cache/huggingface:/root/.cache/huggingface \
    -p 9898:8000 \
    --ipc=host \
    vllm/vllm-openai:latest \
    --model Qwen/Qwen2.5-7B-Instruct --max_model_len 1024 --api-key "k" --gpu_memory_utilization 0.7
