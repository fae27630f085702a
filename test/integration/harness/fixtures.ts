import { copyFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tinyModel } from './tiny-models.js';

export interface SklearnFixture {
  modelPath: string;
  rows: number[][];
  /** What the trained model itself predicts for `rows`, computed in Python at training time. */
  predictions: number[];
  proba: number[][];
}

/**
 * A real scikit-learn classifier trained on a fixed synthetic data set and saved with
 * joblib (test/fixtures/tiny_sklearn.py), from the machine's test model cache, with the
 * model's own answers for a few rows, so a test can check the service returns exactly
 * what the model says.
 */
export function tinySklearn(): SklearnFixture {
  const { path: modelPath, ...answers } = tinyModel<{ path: string } & Omit<SklearnFixture, 'modelPath'>>('sklearn');
  return { modelPath, ...answers };
}

/** The same classifier copied into `dir` (as classifier.joblib), for a test that mounts that folder. */
export async function tinySklearnIn(dir: string): Promise<SklearnFixture> {
  const model = tinySklearn();
  const modelPath = path.join(dir, 'classifier.joblib');
  await copyFile(model.modelPath, modelPath);
  return { ...model, modelPath };
}

/**
 * A user's launcher module for the `python` launcher: `load` keeps its arguments,
 * `infer` computes with them and reports the runtime's pid (to see which replica answered).
 */
export async function writePythonLauncher(dir: string): Promise<string> {
  const file = path.join(dir, 'scaler_launcher.py');
  await writeFile(
    file,
    `import os

def load(scale=1, offset=0):
    return {"scale": scale, "offset": offset}

def infer(model, values, square=False):
    out = [v * model["scale"] + model["offset"] for v in values]
    if square:
        out = [v * v for v in out]
    return {"values": out, "pid": os.getpid()}
`,
  );
  return file;
}
