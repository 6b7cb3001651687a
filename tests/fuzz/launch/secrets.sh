#!/bin/bash
# Issue 18 item 7: secrets a launch script carries besides NAME=value; tests/hostile.rs lists
# each one and checks that none reaches a redacted output.
# alice@gpu-box-planted:~/serve$ ./serve.sh
# password: hunter-planted-1
curl -fsS -H 'Authorization: Token tok-planted-2' -H "X-Api-Key: key-planted-3" \
  https://hooks.slack.com/services/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7 || true
mysql -u vllm -pPlantedMy4 -e 'select 1' || true
pip install --index-url https://ci:p@ss/Planted5@pypi.internal.example/simple vllm
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve Qwen/Qwen3-32B -tp 2 --api-key sk6
