import { describe, expect, it } from 'vitest';
import { expandShortFlags } from '../../src/cli/short-flags.js';

const client = new Set(['launch', 'list', 'chat']);
const argv = (...args: string[]) => ['node', 'hangar', ...args];

describe('Xinference flag spellings', () => {
  it('rewrites -en, -mp, -ak, -ev and --max_tokens for client commands', () => {
    expect(expandShortFlags(argv('launch', '-n', 'x', '-en', 'Transformers', '-mp', '/p', '-ak', 'sk-1', '-ev', 'A', 'B'), client)).toEqual(
      argv('launch', '-n', 'x', '--model-engine', 'Transformers', '--model-path', '/p', '--api-key', 'sk-1', '--env', 'A', 'B'),
    );
    expect(expandShortFlags(argv('chat', '--max_tokens', '8', '-mp=/p'), client)).toEqual(argv('chat', '--max-tokens', '8', '--model-path=/p'));
  });

  it('rewrites the launch pairs -qc, -ld, -fd and -vp, and remove-cache\'s --model_version', () => {
    expect(expandShortFlags(argv('launch', '-qc', 'load_in_4bit', 'true', '-ld', 'a', '1', '-fd', 'b', '2', '-vp', 'numpy'), client)).toEqual(
      argv('launch', '--quantization-config', 'load_in_4bit', 'true', '--image-lora-load-kwargs', 'a', '1', '--image-lora-fuse-kwargs', 'b', '2', '--virtual-env-package', 'numpy'),
    );
    expect(expandShortFlags(argv('list', '--model_version', 'v'), client)).toEqual(argv('list', '--model-version', 'v'));
  });

  it('leaves other commands, other flags and everything after -- alone', () => {
    expect(expandShortFlags(argv('start', '-mp', '9'), client)).toEqual(argv('start', '-mp', '9'));
    expect(expandShortFlags(argv('launch', '--', '-en'), client)).toEqual(argv('launch', '--', '-en'));
    expect(expandShortFlags(argv('launch', '-e', 'http://h:1', '-n', 'x'), client)).toEqual(argv('launch', '-e', 'http://h:1', '-n', 'x'));
  });
});
