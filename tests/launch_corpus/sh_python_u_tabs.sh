#!/bin/bash
# Reduced from wagerc97/gpt-oss-alignment vllm.sh @ 25922b2343ee44788c55ee2d7f3845012bf25382
# Dropped: nothing (tab-indented continuations kept).
python -u \
	-m vllm.entrypoints.openai.api_server \
	--host 0.0.0.0 \
	--port 8010 \
	--model openai/gpt-oss-20b \
	--served-model-name code-gen \
	--tensor-parallel-size 8
