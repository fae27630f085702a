"""Abilities a registration may list (Xinference's catalog does) that no LLM engine
here serves: not claimed by a loaded model, so a route that needs one refuses the
model by its abilities instead of failing in the engine ("no method 'embed'")."""

NOT_SERVED = frozenset({"embed"})
