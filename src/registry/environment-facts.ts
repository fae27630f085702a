/**
 * What the runtime environment offers, probed by the caller (it runs the runtime's
 * Python and looks on the PATH); the registry only compares engines against it, so
 * tests can state any environment without installing anything.
 */
export interface EnvironmentFacts {
  /** Importable top-level Python modules, e.g. `torch`, `sentence_transformers`. */
  readonly pythonModules: ReadonlySet<string>;
  /** Executables found on the runtime's PATH, e.g. `espeak-ng`, `tesseract`. */
  readonly executables: ReadonlySet<string>;
  /** npm packages the control plane can resolve, e.g. `node-llama-cpp` (the llama.cpp runtime runs on Node). */
  readonly nodeModules: ReadonlySet<string>;
  readonly gpuCount: number;
}

/** Nothing installed, no GPU: every engine with a requirement is unusable. */
export const EMPTY_ENVIRONMENT: EnvironmentFacts = {
  pythonModules: new Set(),
  executables: new Set(),
  nodeModules: new Set(),
  gpuCount: 0,
};
