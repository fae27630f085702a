import type { BuiltinCatalog } from './builtin-catalog.js';
import type { LlmRecord, ModelRecord } from './model-record.js';
import { MODEL_TYPES, type ModelType } from './model-type.js';
import type { RegistryLogger } from './registry-logger.js';

/**
 * Built-ins hidden by a stored registration of the same name. The catalog grows with
 * releases, and a name a user registered before the upgrade stays theirs (their saved
 * launches keep working) until they unregister it, which brings the built-in back.
 * A hidden built-in still answers as a family (`model_family`, a hub repo's family):
 * family names mean built-in families.
 */
export class BuiltinShadows {
  private readonly hidden = Object.fromEntries(MODEL_TYPES.map((t) => [t, new Map<string, ModelRecord>()])) as BuiltinCatalog;

  /** `visible` is the registry's built-in catalog, which hide and reveal change in place. */
  constructor(
    private readonly visible: BuiltinCatalog,
    private readonly logger: RegistryLogger,
  ) {}

  /** A stored registration is named like a built-in (one added by an upgrade): the built-in steps aside. */
  hide(type: ModelType, name: string): void {
    const builtin = this.visible[type].get(name);
    if (!builtin) return;
    this.visible[type].delete(name);
    this.hidden[type].set(name, builtin);
    this.logger.warn({ model_type: type, model_name: name }, `The custom ${type} model ${name} has the name of a built-in one; the custom registration is served, and unregistering it brings the built-in back`);
  }

  /** Brings back the built-in hidden under `name`, if one is; returns what undoes it, or null. */
  reveal(type: ModelType, name: string): (() => void) | null {
    const builtin = this.hidden[type].get(name);
    if (!builtin) return null;
    this.hidden[type].delete(name);
    this.visible[type].set(name, builtin);
    return () => {
      this.visible[type].delete(name);
      this.hidden[type].set(name, builtin);
    };
  }

  family(name: string): LlmRecord | undefined {
    return (this.visible.LLM.get(name) ?? this.hidden.LLM.get(name)) as LlmRecord | undefined;
  }

  families(): LlmRecord[] {
    return [...this.visible.LLM.values(), ...this.hidden.LLM.values()] as LlmRecord[];
  }
}
