vllm serve deepseek-ai/DeepSeek-V4-Flash \
  --tensor-parallel-size 2 \
  --trust-remote-code \
  --max-model-len 131072
