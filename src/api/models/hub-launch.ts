import type { FastifyRequest } from 'fastify';
import { allows } from '../../auth/permissions.js';
import { hubTimeoutMs } from '../../config/hub-settings.js';
import { HangarError } from '../../errors/hangar-error.js';
import { buildHubRegistration, envNeedsCodePower, HubClient, parseHubId, pickQuantization, registrationName, transformersRefusal, type ArchitectureFacts, type HubId, type HubModelType, type Registry } from '../../registry/index.js';
import { hubEnvironment } from '../../supervisor/memory-accounting.js';
import { codePower } from '../auth/code-power.js';
import type { LaunchBody } from './schema.js';

const HUB_TYPES: readonly string[] = ['LLM', 'embedding', 'rerank'];

/** Registrations from the hub under way, by `<type>/<name>`: concurrent launches of one repo share one. */
const inFlight = new Map<string, Promise<void>>();
/** What each registration built here read of its checkpoint's code (remote-code.ts), by `<type>/<name>`, for this process's launches of it. */
const architectures = new Map<string, ArchitectureFacts>();

/** The uid a launch by hub id will run under (the body's, else `<org>--<repo>`); null for a body that names no hub id. */
export function hubLaunchUid(body: LaunchBody): string | null {
  const id = parseHubId(body.model_name);
  return id ? (body.model_uid ?? registrationName(id)) : null;
}

/**
 * A launch whose `model_name` is a hub id (docs/registry.md, "Launch by hub id"):
 * the repo is registered as a custom model owned by the caller (built from the hub
 * once; launched again by name later, also with the hub gone), and the body is turned
 * into an ordinary launch of that registration, with the tag's quantization and, when
 * the body names none, the format and engine the repo's files call for. Any other
 * body comes back as it was.
 */
export async function hubLaunchBody(body: LaunchBody, registry: Registry, request: FastifyRequest): Promise<LaunchBody> {
  const id = parseHubId(body.model_name);
  if (!id) return body;
  const type = body.model_type;
  if (!HUB_TYPES.includes(type)) {
    throw new HangarError('hub_model_unusable', [id.repo, `model_type ${type} is not launched by hub id; LLM, embedding and rerank are`], { param: 'model_type' });
  }
  // The launch saves a registration: the caller needs the power to register, as by hand.
  const principal = request.principal;
  if (principal && !allows(principal.scopes, 'models:register')) {
    throw new HangarError('permission_denied', [], { headers: { 'www-authenticate': 'Bearer scope="models:register"' } });
  }
  // The launch's own hub (HF_ENDPOINT and its kind need models:code): refused before the
  // hub is asked and its answers registered, not at the launch after them.
  const guarded = Object.keys(body.envs ?? {}).filter(envNeedsCodePower);
  if (guarded.length > 0 && principal && !allows(principal.scopes, 'models:code')) {
    throw new HangarError('code_power_required', [`launch envs ${guarded.join(', ')} (a hub endpoint or cache folder of the launch's own)`], { headers: { 'www-authenticate': 'Bearer scope="models:code"' } });
  }
  // A bare id follows HANGAR_MODEL_SRC where it names ModelScope; `auto` keeps the Hugging Face hub.
  const hub = body.download_hub ?? (id.hub === null && process.env.HANGAR_MODEL_SRC?.trim().toLowerCase() === 'modelscope' ? 'modelscope' : null);
  if (hub !== null && hub !== 'huggingface') {
    throw new HangarError('invalid_field', [`download_hub: a launch by hub id reads the Hugging Face hub; ${hub} is not supported for it`], { param: 'download_hub' });
  }
  const name = registrationName(id);
  const modelType = type as HubModelType;
  if (!registry.custom(modelType, name)) {
    // Two launches of one repo at once: one reads the hub and registers, the other
    // waits for that and uses the same registration (each 409'd the other before).
    const key = `${modelType}/${name}`;
    let registering = inFlight.get(key);
    if (!registering) {
      registering = (async () => {
        const client = new HubClient({ env: hubEnvironment(body.envs ?? {}), timeoutMs: hubTimeoutMs() });
        const definition = await buildHubRegistration({ client, id, modelType, builtinFamily: (repo) => registry.builtinFamilyOfRepo(repo), architecture: (facts) => architectures.set(key, facts) });
        await registry.register(modelType, { model: definition }, true, codePower(request, 'model.register.code', modelType), principal?.username ?? null);
        request.log.info({ model_name: name, repo: id.repo }, `Registered ${id.repo} from the hub as ${name}`);
      })().finally(() => inFlight.delete(key));
      inFlight.set(key, registering);
    }
    try {
      await registering;
    } catch (err) {
      // Registered meanwhile by hand or by another path: that registration serves.
      if (!(err instanceof HangarError && err.code === 'registration_conflict' && registry.custom(modelType, name))) throw err;
    }
  }
  const record = registry.custom(modelType, name)!;
  if (!downloadsRepo(record, id.repo)) {
    // A registration of this name made by hand (auto-register from a folder, say) would
    // otherwise serve every later launch of the repo's id, with its own weights.
    throw new HangarError('registration_conflict', [`${name}: it is registered as another model, not one downloaded from ${id.repo}; launch it by that name, or unregister it to launch ${id.repo} by id`], { param: 'model_name' });
  }
  const picked = choice(id, body, registry, modelType, name, record);
  refuseUnloadable(architectures.get(`${modelType}/${name}`), picked, body, id.repo);
  return { ...body, model_name: name, ...picked };
}

/**
 * A checkpoint the Transformers engine cannot load as launched is refused before its
 * weights are downloaded (its architecture unknown to the runtime's transformers, or
 * known only to the repository's own code without trust_remote_code); the registration
 * stays, for another engine or a launch that trusts the code.
 */
function refuseUnloadable(facts: ArchitectureFacts | undefined, picked: Pick<LaunchBody, 'model_format' | 'model_engine'>, body: LaunchBody, repo: string): void {
  if (!facts || picked.model_engine?.toLowerCase() !== 'transformers' || picked.model_format === 'ggufv2') return;
  const refusal = transformersRefusal(facts, (body as Record<string, unknown>).trust_remote_code === true);
  if (refusal?.field === 'trust_remote_code') throw new HangarError('invalid_field', [`trust_remote_code: ${repo}: ${refusal.why}`], { param: 'trust_remote_code' });
  if (refusal) throw new HangarError('hub_model_unusable', [repo, refusal.why], { param: 'model_name' });
}

/** Whether every spec of a registration downloads `repo` from the Hugging Face hub (as the registrations this file builds do). */
function downloadsRepo(record: object, repo: string): boolean {
  const specs = (record as { model_specs?: Array<{ model_id?: string | null; model_hub?: string | null; model_uri?: string | null }> }).model_specs ?? [];
  return specs.length > 0 && specs.every((s) => s.model_id?.toLowerCase() === repo.toLowerCase() && (s.model_hub ?? 'huggingface') === 'huggingface' && !s.model_uri);
}

/** Format, quantization and engine of the launch: the body's where it gives them, else what the tag and files say. */
function choice(id: HubId, body: LaunchBody, registry: Registry, type: HubModelType, name: string, record: object): Pick<LaunchBody, 'model_format' | 'quantization' | 'model_engine'> {
  const specs = (record as { model_specs: Array<{ model_format: string; quantization: string; model_file_name_template?: string }> }).model_specs;
  const ggufs = specs.filter((s) => s.model_format === 'ggufv2').map((s) => ({ quantization: s.quantization, files: [s.model_file_name_template ?? ''], bytes: 0, split: null }));
  let format = body.model_format ?? null;
  let quantization = body.quantization ?? null;
  if (id.tag !== null) {
    const picked = pickQuantization(ggufs, id.tag, id.repo).quantization;
    if (quantization !== null && quantization.toLowerCase() !== picked.toLowerCase()) {
      throw new HangarError('invalid_field', [`quantization: ${quantization} contradicts the tag :${id.tag} of model_name; give one of the two`], { param: 'quantization' });
    }
    if (format !== null && format !== 'ggufv2') throw new HangarError('invalid_field', [`model_format: a tag picks a GGUF file; model_format ${format} contradicts it`], { param: 'model_format' });
    return withEngine({ model_format: 'ggufv2', quantization: picked });
  }
  if (format === null && body.model_engine) {
    format = specs.find((s) => engineFits(registry, type, name, s.model_format, body.model_engine!))?.model_format ?? null;
  }
  format ??= specs.find((s) => s.model_format !== 'ggufv2')?.model_format ?? 'ggufv2';
  if (format === 'ggufv2' && ggufs.length > 0) {
    quantization = quantization === null ? pickQuantization(ggufs, null, id.repo).quantization : (ggufs.find((q) => q.quantization.toLowerCase() === quantization!.toLowerCase())?.quantization ?? quantization);
  }
  return withEngine({ model_format: format, quantization });

  function withEngine(picked: { model_format: string; quantization: string | null }): Pick<LaunchBody, 'model_format' | 'quantization' | 'model_engine'> {
    return { ...picked, model_engine: body.model_engine ?? registry.defaultEngine(type, name, picked.model_format) ?? body.model_engine };
  }
}

function engineFits(registry: Registry, type: HubModelType, name: string, format: string, engine: string): boolean {
  const table = registry.engines(type, name);
  const entries = table?.[engine];
  return Array.isArray(entries) && entries.some((e) => e.model_format === format);
}
