"""The LoRA adapters a launch names (Xinference's `peft_model_config.lora_list`),
checked. No torch here: the vLLM engine reads the same list."""

from ...errors import InvalidModel


def lora_list(spec: dict) -> list[tuple[str, str]]:
    """(name, path) of each adapter in the launch's peft_model_config.lora_list."""
    config = spec.get("peft_model_config") or {}
    if not isinstance(config, dict):
        raise InvalidModel(f"peft_model_config must be a map, got {type(config).__name__}")
    entries = config.get("lora_list") or []
    if not isinstance(entries, list):
        raise InvalidModel("peft_model_config.lora_list must be a list")
    adapters: list[tuple[str, str]] = []
    for i, entry in enumerate(entries):
        name = entry.get("lora_name") if isinstance(entry, dict) else None
        path = entry.get("local_path") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or not isinstance(path, str) or not path:
            raise InvalidModel(f"peft_model_config.lora_list.{i}: needs lora_name and local_path")
        if name == "__base__" or any(name == n for n, _ in adapters):
            raise InvalidModel(f"peft_model_config.lora_list.{i}.lora_name: {name} is reserved or given twice")
        adapters.append((name, path))
    return adapters
