#!/bin/bash
# Reduced from mk622/LLaVA vllm/entrypoint.sh @ 9f973a6874f3c2279e7844ea5dceaed75f0eb6cd
# Dropped: nothing.
set -euo pipefail
exec python3 -m vllm.entrypoints.openai.api_server \
  --host 0.0.0.0 \
  --port 8000 \
  "$@"
