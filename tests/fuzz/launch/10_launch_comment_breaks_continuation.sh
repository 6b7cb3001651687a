vllm serve Qwen/Qwen3-32B \
# --enforce-eager \
  --tensor-parallel-size 2
