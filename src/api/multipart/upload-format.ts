import { HangarError } from '../../errors/hangar-error.js';

/**
 * Recognises an upload by its first bytes, so a file that is not audio (or not an
 * image) is a 400 naming the formats the route reads before any runtime sees it.
 * The runtime decodes it for real and answers 400 too if it is damaged further in.
 */
const AUDIO_SIGNATURES: ReadonlyArray<[string, (b: Buffer) => boolean]> = [
  ['wav', (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WAVE'],
  ['flac', (b) => b.subarray(0, 4).toString('latin1') === 'fLaC'],
  ['ogg', (b) => b.subarray(0, 4).toString('latin1') === 'OggS'],
  // An ID3 tag, or straight into an MPEG audio frame (11 sync bits, a layer: ADTS's is 0).
  ['mp3', (b) => b.subarray(0, 3).toString('latin1') === 'ID3' || (b.length > 1 && b[0] === 0xff && ((b[1] ?? 0) & 0xe0) === 0xe0 && ((b[1] ?? 0) & 0x06) !== 0)],
  // A browser's MediaRecorder (EBML), a phone's recordings (ISO media: mp4, m4a), ADTS AAC.
  ['webm', (b) => b.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))],
  ['mp4', (b) => b.subarray(4, 8).toString('latin1') === 'ftyp'],
  ['m4a', () => false], // named in the list: the same container as mp4
  ['aac', (b) => b.length > 1 && b[0] === 0xff && ((b[1] ?? 0) & 0xf6) === 0xf0],
];

const IMAGE_SIGNATURES: ReadonlyArray<[string, (b: Buffer) => boolean]> = [
  ['png', (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))],
  ['jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['gif', (b) => b.subarray(0, 4).toString('latin1') === 'GIF8'],
  ['bmp', (b) => b.subarray(0, 2).toString('latin1') === 'BM'],
  ['tiff', (b) => ['II*\u0000', 'MM\u0000*'].includes(b.subarray(0, 4).toString('latin1'))],
  ['webp', (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP'],
];

// OCR reads PDFs too, page by page (Xinference's OCR route does; docs/media.md).
const OCR_SIGNATURES: ReadonlyArray<[string, (b: Buffer) => boolean]> = [...IMAGE_SIGNATURES, ['pdf', (b) => b.subarray(0, 4).toString('latin1') === '%PDF']];

export const AUDIO_FORMATS = AUDIO_SIGNATURES.map(([name]) => name);
export const IMAGE_FORMATS = IMAGE_SIGNATURES.map(([name]) => name);

export function checkAudio(data: Buffer, field: string): string {
  return check(data, field, 'audio', AUDIO_SIGNATURES);
}

export function checkImage(data: Buffer, field: string): string {
  return check(data, field, 'an image', IMAGE_SIGNATURES);
}

/** An image, or a PDF: what OCR reads. */
export function checkOcrUpload(data: Buffer, field: string): string {
  return check(data, field, 'an image or a PDF', OCR_SIGNATURES);
}

function check(data: Buffer, field: string, kind: string, signatures: ReadonlyArray<[string, (b: Buffer) => boolean]>): string {
  const found = signatures.find(([, matches]) => matches(data));
  if (!found) throw new HangarError('unsupported_upload_format', [field, kind, signatures.map(([name]) => name).join(', ')], { param: field });
  return found[0];
}
