import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HangarError } from '../errors/hangar-error.js';

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//;

/**
 * A registration's `model_uri` names weights on this machine: an absolute path or a
 * `file://` URI (contract §2). Xinference also accepts other schemes "as is", which
 * then fail only at launch; the runtime here reads local files and downloads from
 * hubs by `model_id`, so `s3://`, `http://` and the like are refused at registration,
 * where the user can still fix them. Hub models are registered with `model_id`.
 *
 * Returns the local path; throws `invalid_model_uri` naming the field and the reason.
 */
export function modelUriPath(uri: string, field: string): string {
  const scheme = SCHEME.exec(uri)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (!path.isAbsolute(uri)) {
      throw invalid(uri, field, `${field} must be an absolute path or a file:// URI, not a relative path`);
    }
    return path.normalize(uri);
  }
  if (scheme !== 'file') {
    throw invalid(
      uri,
      field,
      `${field} uses the unsupported scheme ${scheme}://; give an absolute path or a file:// URI, or model_id for a hub model`,
    );
  }
  try {
    return fileURLToPath(uri);
  } catch (err) {
    throw invalid(uri, field, `${field} is not a valid file:// URI (${(err as Error).message})`);
  }
}

/** As `modelUriPath`, and the file or folder must exist now. */
export async function existingModelUriPath(uri: string, field: string): Promise<string> {
  const local = modelUriPath(uri, field);
  try {
    await stat(local);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be read (${code ?? 'error'})`;
    throw invalid(uri, field, `${field}: ${local} ${why}`);
  }
  return local;
}

/** The local path of a URI already validated at registration; null when there is none. */
export function localModelPath(uri: string | null | undefined): string | null {
  if (!uri) return null;
  try {
    return modelUriPath(uri, 'model_uri');
  } catch {
    return null;
  }
}

function invalid(uri: string, field: string, why: string): HangarError {
  return new HangarError('invalid_model_uri', [uri, why], { param: field });
}
