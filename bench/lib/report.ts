import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Figure {
  name: string;
  value: number;
  baseline: number;
  unit: string;
  /** value / baseline, or baseline / value when lower is better, so > 1 always means "better than baseline". */
  ratio: number;
  target?: string;
}

const results: Figure[] = [];

/** Records and prints one figure as `name: value (baseline: value, ratio: x)`. */
export function report(name: string, value: number, baseline: number, unit: string, options: { lowerIsBetter?: boolean; target?: string } = {}): Figure {
  const ratio = options.lowerIsBetter ? baseline / value : value / baseline;
  const figure: Figure = { name, value, baseline, unit, ratio, ...(options.target ? { target: options.target } : {}) };
  results.push(figure);
  const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toPrecision(3));
  console.log(`${name}: ${fmt(value)} ${unit} (baseline: ${fmt(baseline)} ${unit}, ratio: ${ratio.toFixed(2)}x)${options.target ? ` [target ${options.target}]` : ''}`);
  return figure;
}

/**
 * Writes every figure of this run to bench/results/<name>.json with the machine it ran
 * on; `incomplete` says which part did not run, and why.
 */
export async function writeResults(benchName: string, options: { incomplete?: string } = {}): Promise<void> {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'results');
  await mkdir(dir, { recursive: true });
  const machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', memory_gib: Math.round(os.totalmem() / 2 ** 30), node: process.version };
  await writeFile(path.join(dir, `${benchName}.json`), `${JSON.stringify({ bench: benchName, date: new Date().toISOString(), machine, ...(options.incomplete ? { incomplete: options.incomplete } : {}), results }, null, 2)}\n`);
}
