import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { venvPython } from './server.js';

export interface SklearnFixture {
  modelPath: string;
  rows: number[][];
  /** What the trained model itself predicts for `rows`, computed in Python at training time. */
  predictions: number[];
  proba: number[][];
}

/**
 * Trains a real scikit-learn classifier on a fixed synthetic data set, saves it with
 * joblib, and records the model's own answers for a few rows, so a test can check the
 * service returns exactly what the model says.
 */
export function trainSklearnModel(dir: string): SklearnFixture {
  const modelPath = path.join(dir, 'classifier.joblib');
  const script = `
import json, sys, joblib, numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
rng = np.random.default_rng(7)
X = np.vstack([rng.normal(-2, 1, (60, 3)), rng.normal(2, 1, (60, 3)), rng.normal([6, -6, 0], 1, (60, 3))])
y = np.array([0] * 60 + [1] * 60 + [2] * 60)
model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(X, y)
joblib.dump(model, sys.argv[1])
rows = [[-2.0, -2.0, -2.0], [2.0, 2.0, 2.0], [6.0, -6.0, 0.0], [0.1, 0.2, 0.3]]
print(json.dumps({"rows": rows, "predictions": model.predict(rows).tolist(), "proba": model.predict_proba(rows).tolist()}))
`;
  const out = execFileSync(venvPython, ['-c', script, modelPath], { encoding: 'utf8' });
  const parsed = JSON.parse(out) as Omit<SklearnFixture, 'modelPath'>;
  return { modelPath, ...parsed };
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
