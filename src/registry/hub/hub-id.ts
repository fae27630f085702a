import { createHash } from 'node:crypto';
import { HangarError } from '../../errors/hangar-error.js';

/**
 * A model named by its hub repository in a launch (docs/registry.md, "Launch by hub
 * id"): `hf.co/<org>/<repo>[:<tag>]`, `huggingface.co/...` (also as an https URL),
 * or a bare `<org>/<repo>[:<tag>]`. Registered names cannot hold `/`, so a name with
 * one is never a registration's. The tag picks a GGUF quantization or file, as
 * `ollama run hf.co/...:Q4_K_M` does.
 */
export interface HubId {
  /** `<org>/<repo>`, as the hub spells it. */
  repo: string;
  /** What follows the last `:`; null without one. */
  tag: string | null;
  /** `huggingface` when the name said so (`hf.co/`); null for a bare `<org>/<repo>`, whose hub the launch picks. */
  hub: 'huggingface' | null;
}

const HF_PREFIX = /^(?:https?:\/\/)?(?:hf\.co|huggingface\.co)\//i;
// The hub's own rule for repo names: letters, digits, `-`, `_`, `.`; no `--` or `..`, not starting or ending in `-` or `.`.
const PART = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?$/;

/** The hub id in a launch's model_name; null when the name holds no `/` (a registration's name). */
export function parseHubId(name: string): HubId | null {
  if (!name.includes('/')) return null;
  const prefixed = HF_PREFIX.exec(name);
  let rest = prefixed ? name.slice(prefixed[0].length) : name;
  let tag: string | null = null;
  const colon = rest.lastIndexOf(':');
  if (colon !== -1) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (tag.length === 0) throw bad(name, 'the tag after ":" is empty; write hf.co/<org>/<repo>:<quantization>, or leave out the ":"');
  }
  const parts = rest.replace(/\/+$/, '').split('/');
  if (parts.length !== 2 || !parts.every((p) => PART.test(p) && !p.includes('--') && !p.includes('..'))) {
    throw bad(name, 'a model on the hub is named hf.co/<org>/<repo>[:<quantization>] or <org>/<repo>, with letters, digits, "-", "_" and "." in each part');
  }
  return { repo: parts.join('/'), tag, hub: prefixed ? 'huggingface' : null };
}

/**
 * The registration a hub id is saved as: `<org>--<repo>`, the way huggingface_hub names
 * a repo's cache folder, so the name is readable, unique per repo and valid as a model
 * uid (no `/`). One registration holds all of a repo's quantizations.
 */
export function registrationName(id: HubId): string {
  const name = id.repo.replace('/', '--');
  if (name.length <= MAX_NAME) return name;
  // The hub allows longer ids than a registration's 100 characters (an organization
  // and a repo name of up to 96 each): the start, kept readable, and a hash of the whole.
  const hash = createHash('sha256').update(id.repo).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_NAME - hash.length - 1).replace(/[-.]+$/, '')}-${hash}`;
}

/** A registration's longest name (custom-definition.ts). */
const MAX_NAME = 100;

function bad(name: string, why: string): HangarError {
  return new HangarError('invalid_field', [`model_name: ${JSON.stringify(name)} is not a hub id: ${why}`], { param: 'model_name' });
}
