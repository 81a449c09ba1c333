import fs from 'node:fs';
import path from 'node:path';
import { benchDir } from './child.js';

/** The installed version of an npm package (read from node_modules, since not every package exports it). */
export function packageVersion(name: string): string {
  try {
    const file = path.join(benchDir, '..', 'node_modules', name, 'package.json');
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    const version = typeof parsed === 'object' && parsed !== null ? (parsed as { version?: unknown }).version : undefined;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}
