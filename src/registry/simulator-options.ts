import { z } from 'zod';
import { numeric } from './numeric-option.js';

/**
 * The simulator engine's launch options (docs/simulator.md), with the ranges the
 * runtime's own check uses (`engines/simulator/options.py`). Other extra fields pass:
 * generic ones such as `device` reach every engine.
 */
export const simulatorOptions = z.looseObject({
  step_ms: numeric(0, 60_000),
  ttft_ms: numeric(0, 600_000),
  max_batch: numeric(1, 65_536, true),
});
