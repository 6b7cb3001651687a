#!/bin/bash
# Reduced from vllm-project/vllm examples/online_serving/openai_embedding_long_text/service.sh @ 0835e4df38a9b253f6a9a1573938911fc099128f
# Dropped: comments, the echo banners, the GPU count check, most case arms.
set -euo pipefail

MODEL_NAME=${MODEL_NAME:-"intfloat/multilingual-e5-large"}
MODEL_CODE=${MODEL_CODE:-"multilingual-e5-large"}

PORT=${PORT:-31090}
GPU_COUNT=${GPU_COUNT:-1}
MAX_EMBED_LEN=${MAX_EMBED_LEN:-3072000}
API_KEY=${API_KEY:-"your-api-key"}

POOLING_TYPE=${POOLING_TYPE:-"auto"}
export VLLM_ENABLE_CHUNKED_PROCESSING=true
export CUDA_VISIBLE_DEVICES=2,3,4,5

export VLLM_WORKER_MULTIPROC_METHOD=spawn

get_optimal_pooling_type() {
    local model="$1"
    case "$model" in
        *"e5-"* | *"multilingual-e5"*)
            echo "MEAN"
            ;;
        *)
            echo "MEAN"
            ;;
    esac
}

if [ "$POOLING_TYPE" = "auto" ]; then
    POOLING_TYPE=$(get_optimal_pooling_type "$MODEL_NAME")
fi

POOLER_CONFIG="{\"pooling_type\": \"$POOLING_TYPE\", \"normalize\": true, \"max_embed_len\": ${MAX_EMBED_LEN}}"

vllm serve "$MODEL_NAME" \
  --tensor-parallel-size "$GPU_COUNT" \
  --enforce-eager \
  --override-pooler-config "$POOLER_CONFIG" \
  --served-model-name ${MODEL_CODE} \
  --api-key "$API_KEY" \
  --trust-remote-code \
  --port "$PORT" \
  --host 0.0.0.0

echo "vLLM Embedding Server started"
