"""Which device a PyTorch engine puts its model on. Imported only by engines
that already import PyTorch."""

import os

import torch


def pick_device() -> torch.device:
    # The control plane gives a replica its GPUs through CUDA_VISIBLE_DEVICES and
    # sets it empty for CPU replicas; an unset variable also means CPU, so a
    # runtime started by hand does not grab whatever GPU it sees.
    if os.environ.get("CUDA_VISIBLE_DEVICES") and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
