"""Double of vllm.lora.request (0.30.0): LoRARequest with the release's fields (a
msgspec struct there; a dataclass here). Proves well-formed calls only."""

from dataclasses import dataclass


@dataclass
class LoRARequest:
    lora_name: str
    lora_int_id: int
    lora_path: str = ""

    def __post_init__(self):
        if not isinstance(self.lora_int_id, int) or self.lora_int_id < 1:
            raise ValueError(f"id must be > 0, got {self.lora_int_id}")
