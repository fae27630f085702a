"""The batch's KV cache, one row per running sequence, left-padded: every row
ends at the same column, so one decoding step appends one column for all.

A 2-D attention mask (1 real, 0 padding) goes with it. Joining two batches
pads the shorter one on the left with masked zero columns; leaving keeps the
remaining rows and cuts the columns that are padding in all of them.

Only plain DynamicCache layers (full attention, keys and values of shape
[batch, heads, columns, head_dim]) can be joined like that; for other caches
(sliding windows, linear attention) the batcher rebuilds the cache instead."""

import torch
import torch.nn.functional as F
from transformers import DynamicCache

try:
    from transformers.cache_utils import DynamicLayer
except ImportError:  # transformers 4.x before the layered cache (< 4.56): always rebuild
    DynamicLayer = None


def new_cache(config) -> DynamicCache:
    """An empty cache; transformers 4.x before 4.56 takes no config."""
    try:
        return DynamicCache(config=config)
    except TypeError:
        return DynamicCache()


def joinable(cache) -> bool:
    if DynamicLayer is None:
        return False
    return type(cache) is DynamicCache and all(type(layer) is DynamicLayer for layer in cache.layers)


def left_pad(rows: list[list[int]], pad_id: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(input ids, attention mask), both [len(rows), longest row], padded on the left."""
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            ids[i, width - len(row):] = torch.tensor(row, dtype=torch.long)
            mask[i, width - len(row):] = 1
    return ids.to(device), mask.to(device)


def positions(mask: torch.Tensor) -> torch.Tensor:
    """Each real token's position within its own sequence; padding gets 0 (it is
    masked anyway). Without this a padded row would start at position `padding`."""
    return (mask.cumsum(-1) - 1).clamp(min=0)


def join(cache: DynamicCache, mask: torch.Tensor, other: DynamicCache, other_mask: torch.Tensor):
    """cache's rows, then other's, in `cache` (changed in place); returns the joined mask."""
    width = max(mask.shape[1], other_mask.shape[1])
    for layer, other_layer in zip(cache.layers, other.layers, strict=True):
        layer.keys = torch.cat([_pad_columns(layer.keys, width), _pad_columns(other_layer.keys, width)])
        layer.values = torch.cat([_pad_columns(layer.values, width), _pad_columns(other_layer.values, width)])
    return torch.cat([_pad_mask(mask, width), _pad_mask(other_mask, width)])


def keep_rows(cache, mask: torch.Tensor, rows: list[int]) -> torch.Tensor:
    """Keeps only `rows` (in place); returns their mask, with the columns that are
    padding in every remaining row cut when the cache allows it."""
    index = torch.tensor(rows, dtype=torch.long, device=mask.device)
    cache.batch_select_indices(index)
    mask = mask.index_select(0, index)
    if not joinable(cache):
        return mask
    real_columns = mask.any(dim=0).nonzero()
    lead = int(real_columns[0]) if len(real_columns) else 0
    if lead:
        for layer in cache.layers:
            layer.keys = layer.keys[:, :, lead:, :]
            layer.values = layer.values[:, :, lead:, :]
        mask = mask[:, lead:]
    return mask


def _pad_columns(states: torch.Tensor, width: int) -> torch.Tensor:
    # [batch, heads, columns, head_dim]: pad dim -2 on the left.
    return F.pad(states, (0, 0, width - states.shape[-2], 0))


def _pad_mask(mask: torch.Tensor, width: int) -> torch.Tensor:
    return F.pad(mask, (width - mask.shape[1], 0))
