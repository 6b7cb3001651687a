#!/bin/bash
# Reduced from vllm-project/vllm docs/deployment/systemd.md @ f10785b94093ab7ebeabffdb0e1315c2de7355fd
# Dropped: the page's prose; the transient-unit command from its bash block, the curl after it.
systemd-run --user --property=Type=notify --property=NotifyAccess=all \
  --property=TimeoutStartSec=30min --unit=vllm-llama \
  vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000
