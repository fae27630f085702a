"""The `simulator` engine: a GPU-shaped token source for load tests (no model)."""
