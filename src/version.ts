import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from './config/config.js';

/** The package version, read once from package.json. */
export const version: string = (JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
