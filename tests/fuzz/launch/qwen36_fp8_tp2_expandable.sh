export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
vllm serve Qwen/Qwen3.6-27B-FP8 \
  --tensor-parallel-size 2 \
  --gpu-memory-utilization 0.95 \
  --compilation-config '{"cudagraph_mode": "FULL_AND_PIECEWISE"}'
