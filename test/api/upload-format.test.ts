import { describe, expect, it } from 'vitest';
import { HangarError } from '../../src/errors/hangar-error.js';
import { checkAudio, checkImage } from '../../src/api/multipart/upload-format.js';

describe('upload formats', () => {
  it('recognises audio and images by their first bytes', () => {
    expect(checkAudio(Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'), 'file')).toBe('wav');
    expect(checkAudio(Buffer.from('fLaC\0\0\0"', 'latin1'), 'file')).toBe('flac');
    expect(checkAudio(Buffer.from('OggS\0\u0002', 'latin1'), 'file')).toBe('ogg');
    expect(checkAudio(Buffer.from('ID3\u0004\0', 'latin1'), 'file')).toBe('mp3');
    expect(checkAudio(Buffer.from([0xff, 0xfb, 0x90, 0x64]), 'file')).toBe('mp3');
    expect(checkImage(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]), 'image')).toBe('png');
    expect(checkImage(Buffer.from([0xff, 0xd8, 0xff, 0xe0]), 'image')).toBe('jpeg');
    expect(checkImage(Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'), 'image')).toBe('webp');
  });

  it('refuses anything else with a 400 that names the field and the formats', () => {
    let error: unknown;
    try {
      checkImage(Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'), 'image');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HangarError);
    expect((error as HangarError).status).toBe(400);
    expect((error as HangarError).param).toBe('image');
    expect((error as HangarError).message).toBe('The file in field image is not an image in a format this route reads; expected one of: png, jpeg, gif, bmp, tiff, webp');
    expect(() => checkAudio(Buffer.from('%PDF-1.7'), 'file')).toThrow(/expected one of: wav, flac, ogg, mp3/);
  });
});
