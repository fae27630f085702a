/** The registry's public surface: everything outside `src/registry/` imports from here. */
export { ModelCache, type CacheEntry } from './model-cache.js';
export { envNeedsCodePower, launchCodeRisks, registrationCodeRisks } from './code-risks.js';
export { Registry, type RegistryOptions, type ListItem, type EngineTable } from './registry.js';
export type { EnvironmentFacts } from './environment-facts.js';
export { EMPTY_ENVIRONMENT } from './environment-facts.js';
export type { RegistryLogger } from './registry-logger.js';
export type { LaunchSelection } from './launch-resolution.js';
export type { ResolvedModel, LoadFields } from './resolved-model.js';
export type { ModelRecord, RecordByType, FlatSpec } from './model-record.js';
export { ENGINE_TABLE, type EngineDefinition, type Requirement } from './engine-table.js';
export { MODEL_TYPES, isModelType, registryFolder, type ModelType } from './model-type.js';
export { estimateMemory, estimateOfShape, type MemoryEstimate, type EstimateInput } from './memory-estimate.js';
export { parseHubId, registrationName, type HubId } from './hub/hub-id.js';
export { HubClient } from './hub/hub-client.js';
export { buildHubRegistration, type HubModelType } from './hub/hub-registration.js';
export { transformersRefusal, type ArchitectureFacts } from './hub/remote-code.js';
export { pickQuantization, type GgufQuantization } from './hub/gguf-files.js';
