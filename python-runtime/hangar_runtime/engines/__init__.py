"""Engines: what actually loads and runs a model. See registry.ENGINES."""
