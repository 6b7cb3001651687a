# Launch of the #47266 reporter (Qwen/Qwen3.6-27B-FP8 on 2x RTX PRO 6000, TP=2, CUDA graphs on).
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
vllm serve Qwen/Qwen3.6-27B-FP8 \
  --tensor-parallel-size 2 \
  --compilation-config '{"cudagraph_mode": "FULL_AND_PIECEWISE"}'
