import { execFileSync } from 'node:child_process';
import { venvPython } from './server.js';
import { tinyModels } from './tiny-models.js';

export interface TinyMediaModel {
  kind: 'whisper' | 'captioner' | 'tts' | 'diffusion';
  path: string;
}

/** The tiny media models of these kinds, from the machine's test model cache (tinyModels). */
export function tinyMediaModels(kinds: Array<TinyMediaModel['kind']>): Partial<Record<TinyMediaModel['kind'], TinyMediaModel>> {
  const built = tinyModels(kinds) as Array<Omit<TinyMediaModel, 'kind'>>;
  return Object.fromEntries(kinds.map((kind, i) => [kind, { ...built[i]!, kind }])) as Partial<Record<TinyMediaModel['kind'], TinyMediaModel>>;
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
