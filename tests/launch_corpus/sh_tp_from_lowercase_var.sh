#!/bin/bash
# Reduced from FreedomIntelligence/Smurfs script/vllm_server_w_chat_template.sh @ 3756ac617a342f6a7c8e765d0de16db9c4d92d78
# Dropped: nothing.
model_name="Your/Model/Name"
tensor_parallel_size=4
chat_template_path="Your/Template/Path"

cd $model_path
cd ..
python -m vllm.entrypoints.openai.api_server --model $model_name --dtype=half --tensor-parallel-size $tensor_parallel_size --chat-template $chat_template_path
