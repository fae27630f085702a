"""The `sentence_transformers` engine: embedding models (bi-encoders) and rerank
models (cross-encoders) loaded with sentence-transformers, served with dynamic
batching (docs/runtime-protocol.md, "`sentence_transformers` (embedding, rerank)").

Only engine.py is imported when a LOAD names the engine; it imports the modules
that need PyTorch after the model files are there, so a download that cannot
start fails before paying for the import (ten seconds on a small machine).

Inside this package `sentence_transformers` still means the library: imports
are absolute unless they start with a dot."""
