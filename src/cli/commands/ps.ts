import { Command } from 'commander';
import { clientAction, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { formatTable } from '../table.js';
import { out } from '../terminal.js';

type Item = Record<string, any>;

interface Device {
  device: string;
  budget_bytes: number | null;
  used_bytes: number;
  free_bytes: number;
}

/**
 * `hangar ps` (Ollama's): what is loaded and what it holds. Each model with its
 * state (ASLEEP: a vLLM model put to sleep to make room), the memory estimated for it and measured in its runtimes, its keep_alive and
 * how long it has been idle; on-demand entries not loaded as UNLOADED; then each
 * device's budget (docs/on-demand.md).
 */
export function psCommand(): Command {
  return withConnectionOptions(new Command('ps').description('list loaded and on-demand models with their memory and idle time').option('--json', 'print models and devices as JSON')).action(
    clientAction<ConnectionOptions & { json?: boolean }>(async (http, options) => {
      const [{ data }, { devices }] = await Promise.all([http.get<{ data: Item[] }>('/v1/models'), http.get<{ devices: Device[] }>('/v1/memory')]);
      const models = data.filter((m) => !m.parent);
      if (options.json) return printJson({ models, devices });
      const rows = models.map((m) => {
        const measured = Array.isArray(m.replica_memory) ? m.replica_memory.reduce((sum: number, r: Item) => sum + (r.rss_bytes ?? 0) + (r.gpu_memory_bytes ?? 0), 0) : 0;
        return [
          m.id,
          m.model_name,
          m.model_engine,
          m.sleeping ? 'ASLEEP' : (m.status ?? 'READY'),
          m.on_demand ? 'on demand' : 'by hand',
          typeof m.memory_estimate === 'number' ? size(m.memory_estimate * (m.replica ?? 1)) : '',
          measured > 0 ? size(measured) : '',
          keepAlive(m.keep_alive),
          m.status === 'UNLOADED' ? '' : duration(m.idle_seconds ?? 0),
        ];
      });
      const lines = [models.length === 0 ? 'No models loaded.' : formatTable(['UID', 'Name', 'Engine', 'Status', 'Loaded', 'Estimate', 'Measured', 'Keep alive', 'Idle'], rows)];
      for (const d of devices) {
        const budget = d.budget_bytes === null ? 'no budget' : `${size(d.used_bytes)} of ${size(d.budget_bytes)} budget (${size(d.free_bytes)} free)`;
        lines.push(`${d.device === 'cpu' ? 'Host memory' : d.device.toUpperCase()}: ${budget}`);
      }
      out(`${lines.join('\n')}\n`);
    }),
  );
}

function size(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
  return `${Math.round(bytes / 2 ** 20)} MiB`;
}

function keepAlive(seconds: unknown): string {
  if (typeof seconds !== 'number') return '';
  return seconds < 0 ? 'forever' : duration(seconds);
}

function duration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${Math.round(seconds % 60) ? `${Math.round(seconds % 60)}s` : ''}`;
  return `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60) ? `${Math.floor((seconds % 3600) / 60)}m` : ''}`;
}
