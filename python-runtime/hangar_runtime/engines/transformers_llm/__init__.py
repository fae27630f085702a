"""The `transformers` engine: causal LLMs loaded with Hugging Face transformers,
served with continuous batching (docs/runtime-protocol.md, "`transformers` (LLM)").

Only engine.py is imported when a LOAD names the engine; it imports the modules
that need PyTorch after the model files are there, so a download that cannot
start fails before paying for the import."""
