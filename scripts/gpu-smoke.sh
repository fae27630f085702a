#!/usr/bin/env bash
# A smoke test for a GPU host (docs/gpu-smoke.md): builds and starts Hangar with
# docker compose, launches a small instruct model with vLLM, chats (plain and
# streamed), then runs bench/llm-relay.ts's load shape against it and `vllm bench
# serve` at the same concurrency, so the two can be compared on this machine; then
# the same family as GGUF on the llama.cpp engine's CUDA build.
#
#   scripts/gpu-smoke.sh [model-name] [size-in-billions]      (default qwen2.5-instruct 0_5)
#
# Needs: docker with the NVIDIA runtime, curl, jq; network access to pull the base
# image and the model's weights. Talks to 127.0.0.1 only. Leaves the service running;
# stop it with: docker compose -f docker/compose.yaml down
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL=${1:-qwen2.5-instruct}
SIZE=${2:-0_5}
PORT=${HANGAR_PUBLISH:-9997}
URL="http://127.0.0.1:${PORT}"
CONCURRENCY=${CONCURRENCY:-64}
# vllm bench serve counts tokens with the model's own tokenizer (a hub id or a folder).
TOKENIZER=${TOKENIZER:-Qwen/Qwen2.5-0.5B-Instruct}
# The GGUF quantization the llama.cpp leg launches (one of the family's ggufv2 specs).
GGUF_QUANT=${GGUF_QUANT:-q4_k_m}
say() { printf '\n== %s\n' "$*"; }
need() { command -v "$1" >/dev/null || { echo "gpu-smoke: $1 is needed" >&2; exit 2; }; }
need docker; need curl; need jq
nvidia-smi >/dev/null 2>&1 || { echo "gpu-smoke: nvidia-smi does not answer: no GPU visible here" >&2; exit 2; }

say "building and starting the GPU image (docker/compose.yaml)"
HANGAR_PUBLISH=$PORT docker compose -f docker/compose.yaml up -d --build
for _ in $(seq 1 120); do curl -fsS "$URL/status" >/dev/null 2>&1 && break; sleep 2; done
curl -fsS "$URL/status" | jq -c .

say "launching $MODEL ($SIZE B) with vLLM"
curl -fsS "$URL/v1/models" -H 'content-type: application/json' -d "{
  \"model_name\": \"$MODEL\", \"model_type\": \"LLM\", \"model_engine\": \"vLLM\",
  \"model_size_in_billions\": \"$SIZE\", \"model_uid\": \"smoke\", \"gpu_memory_utilization\": 0.8}" | jq -c .

say "chat"
curl -fsS "$URL/v1/chat/completions" -H 'content-type: application/json' -d '{
  "model": "smoke", "messages": [{"role": "user", "content": "Say hello in five words."}], "max_tokens": 32}' \
  | jq -r '.choices[0].message.content, .usage'

say "streamed chat (first and last events)"
curl -fsSN "$URL/v1/chat/completions" -H 'content-type: application/json' -d '{
  "model": "smoke", "messages": [{"role": "user", "content": "Count to ten."}], "max_tokens": 64,
  "stream": true, "stream_options": {"include_usage": true}}' | sed -n '1p;$p'

say "Hangar's relay under $CONCURRENCY concurrent streams (the same clients as bench/llm-relay.ts)"
if command -v node >/dev/null && [ -d node_modules ]; then
  node --import tsx bench/lib/relay-client.ts "$URL/v1/chat/completions" "$CONCURRENCY" \
    '{"model": "smoke", "messages": [{"role": "user", "content": "Write a long story."}], "max_tokens": 512, "stream": true, "stream_options": {"include_usage": true}}'
else
  echo "(skipped: run npm ci here to use bench/lib/relay-client.ts)"
fi

say "vllm bench serve against Hangar at the same concurrency (inside the container)"
docker compose -f docker/compose.yaml exec -T hangar /app/python-runtime/.venv/bin/vllm bench serve \
  --backend openai-chat --base-url "http://127.0.0.1:9997" --endpoint /v1/chat/completions \
  --model smoke --tokenizer "$TOKENIZER" \
  --dataset-name random --random-input-len 128 --random-output-len 512 --ignore-eos \
  --num-prompts $((CONCURRENCY * 4)) --max-concurrency "$CONCURRENCY" \
  || echo "(vllm bench serve failed; the chat checks above still stand)"

say "llama.cpp on the GPU: $MODEL ($SIZE B) as GGUF ($GGUF_QUANT), every layer offloaded (n_gpu 1)"
curl -fsS "$URL/v1/models" -H 'content-type: application/json' -d "{
  \"model_name\": \"$MODEL\", \"model_engine\": \"llama.cpp\", \"model_format\": \"ggufv2\",
  \"model_size_in_billions\": \"$SIZE\", \"quantization\": \"$GGUF_QUANT\", \"model_uid\": \"smoke-gguf\", \"n_gpu\": 1}" | jq -c .
# The runtime logs which binding it loaded ("llama.cpp on cuda") and how many layers went to the GPU.
docker compose -f docker/compose.yaml logs hangar 2>&1 | grep -E 'llama.cpp on|offloaded' | tail -n 3 || true
curl -fsS "$URL/v1/chat/completions" -H 'content-type: application/json' -d '{
  "model": "smoke-gguf", "messages": [{"role": "user", "content": "Give a JSON object with a name and an age."}],
  "max_tokens": 64, "response_format": {"type": "json_object"}}' | jq -r '.choices[0].message.content, .usage'
curl -fsS "$URL/v1/chat/completions" -H 'content-type: application/json' -d '{
  "model": "smoke-gguf", "messages": [{"role": "user", "content": "Count to ten."}], "max_tokens": 64,
  "stream": true, "stream_options": {"include_usage": true}}' | sed -n '1p;$p'
if command -v node >/dev/null && [ -d node_modules ]; then
  node --import tsx bench/lib/relay-client.ts "$URL/v1/chat/completions" 8 \
    '{"model": "smoke-gguf", "messages": [{"role": "user", "content": "Write a long story."}], "max_tokens": 256, "stream": true, "stream_options": {"include_usage": true}}'
fi

say "done: the service is still up at $URL"
