#!/bin/bash
# Reduced from vllm-project/vllm examples/online_serving/sagemaker-entrypoint.sh @ b1a523bf30aebcf76c6a19397a8419afef36bae4
# Dropped: comments, nothing but comments.

PREFIX="SM_VLLM_"
ARG_PREFIX="--"

ARGS=(--port 8080)

while IFS='=' read -r key value; do
    arg_name=$(echo "${key#"${PREFIX}"}" | tr '[:upper:]' '[:lower:]' | tr '_' '-')
    ARGS+=("${ARG_PREFIX}${arg_name}")
    if [ -n "$value" ]; then
        ARGS+=("$value")
    fi
done < <(env | grep "^${PREFIX}")

exec vllm serve "${ARGS[@]}"
