import { randomInt } from 'node:crypto';
import { HangarError } from '../errors/hangar-error.js';
import { invisibleFormatting } from '../registry/invisible-formatting.js';

const MAX_UID_LENGTH = 100;
// `/` would break DELETE /v1/models/{uid} (Xinference issue #870), whitespace and
// control characters (C0, DEL and C1) break logs and shells.
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[/\s\u0000-\u001f\u007f-\u009f]/;

/** Checks a user-given uid against contract §3.1 and throws a 400 that says what is wrong. */
export function validateModelUid(uid: string): void {
  if (uid.length === 0 || uid.length > MAX_UID_LENGTH) {
    throw new HangarError('invalid_model_uid', [`it must have 1 to ${MAX_UID_LENGTH} characters, it has ${uid.length}`], { param: 'model_uid' });
  }
  // A lone surrogate has no UTF-8 form: no URL could name the model to stop it.
  if (!uid.isWellFormed()) throw new HangarError('invalid_model_uid', ['it must be Unicode text (it holds a lone surrogate)'], { param: 'model_uid' });
  // URL parsers (Node's, httpx, browsers) resolve `.` and `..` segments, `%2e` too: no
  // client could address such a model again, not even to stop it.
  if (uid === '.' || uid === '..') throw new HangarError('invalid_model_uid', [`it must not be "${uid}", which a URL path cannot hold`], { param: 'model_uid' });
  // Invisible formatting (a zero-width space, a right-to-left override) let `sim\u200b`
  // pass for `sim` in every listing, and `\u202eexe.txt` show as `txt.exe`: the rule
  // model names follow (registry/custom-definition.ts).
  const invisible = invisibleFormatting(uid);
  if (invisible) throw new HangarError('invalid_model_uid', [invisible], { param: 'model_uid' });
  const bad = FORBIDDEN.exec(uid);
  if (bad) {
    const shown = bad[0] === '/' ? '"/"' : `character code ${bad[0].charCodeAt(0)}`;
    throw new HangarError('invalid_model_uid', [`it must not contain ${shown}`], { param: 'model_uid' });
  }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Xinference's fallback when the model name is taken as a uid: the name, `-`, 8 random letters or digits. */
export function suffixedUid(modelName: string): string {
  let suffix = '';
  for (let i = 0; i < 8; i++) suffix += ALPHABET[randomInt(ALPHABET.length)];
  return `${modelName}-${suffix}`;
}
