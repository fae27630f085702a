import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, venvPython } from './server.js';

export interface TinyMediaModel {
  kind: 'whisper' | 'captioner' | 'tts' | 'diffusion';
  path: string;
}

/** Runs `test/fixtures/tiny_media_models.py` once for every (kind, folder) pair; one JSON line each. */
export function buildTinyMediaModels(pairs: Array<[TinyMediaModel['kind'], string]>): Partial<Record<TinyMediaModel['kind'], TinyMediaModel>> {
  const out = execFileSync(venvPython, [path.join(repoRoot, 'test', 'fixtures', 'tiny_media_models.py'), ...pairs.flat()], {
    encoding: 'utf8',
    env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
    timeout: 180_000,
  });
  const built = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as TinyMediaModel);
  return Object.fromEntries(built.map((m) => [m.kind, m])) as Partial<Record<TinyMediaModel['kind'], TinyMediaModel>>;
}

/** Writes a PNG with `text` drawn in black on white (Pillow's default font at 40 px), for OCR read-back. */
export function renderTextImage(text: string, file: string): void {
  const script = [
    'import sys',
    'from PIL import Image, ImageDraw, ImageFont',
    'text, out = sys.argv[1], sys.argv[2]',
    'font = ImageFont.load_default(size=40)',
    'width = int(font.getlength(text)) + 60',
    'image = Image.new("RGB", (width, 110), "white")',
    'ImageDraw.Draw(image).text((30, 30), text, fill="black", font=font)',
    'image.save(out)',
  ].join('\n');
  execFileSync(venvPython, ['-c', script, text, file], { timeout: 60_000 });
}

/** Whether the runtime's Python can import a module (diffusers is not installable everywhere). */
export function pythonHas(module: string): boolean {
  const script = 'import importlib.util, sys; print(importlib.util.find_spec(sys.argv[1]) is not None)';
  return execFileSync(venvPython, ['-c', script, module], { encoding: 'utf8', timeout: 60_000 }).trim() === 'True';
}
