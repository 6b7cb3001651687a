docker run --gpus all -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -v ~/.cache:/root/.cache vllm/vllm-openai:v0.24.0 --model Qwen/Qwen3-32B -tp 2
