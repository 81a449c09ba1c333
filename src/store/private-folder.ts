import fs from 'node:fs';
import path from 'node:path';

/**
 * The embedded database's folder is its owner's alone: its files hold the token signing key, client secrets'
 * hashes and every number verified. PGlite writes them 0666 whatever the umask, so the folders around them are
 * what keeps other users out, and the service keeps everything in them at 0700 (folders) and 0600 (files).
 */

/** Group and world permission bits. */
const othersBits = 0o077;

/** A data folder other users may read, write or enter: the start refuses it and says how to close it. */
export class ExposedDataFolderError extends Error {
  constructor(
    readonly folder: string,
    readonly mode: number,
  ) {
    super(
      `DATA_DIR ${folder} can be opened by other users (mode ${mode.toString(8).padStart(4, '0')}); it holds the token signing key, ` +
        `client secrets' hashes and every number verified. Make it the service user's alone: chmod -R go-rwx ${folder}`,
    );
    this.name = 'ExposedDataFolderError';
  }
}

/**
 * Makes `dir` (and any missing parent) with mode 0700 if it does not exist; throws ExposedDataFolderError if it
 * exists and grants group or others any access.
 */
export function privateFolder(dir: string): void {
  let mode: number;
  try {
    mode = fs.statSync(dir).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // mkdir's mode passes through the umask, which can only take bits away; set it exactly all the same.
    fs.chmodSync(dir, 0o700);
    return;
  }
  if ((mode & othersBits) !== 0) throw new ExposedDataFolderError(dir, mode);
}

/** Every folder under `dir` (itself included) to 0700 and every file to 0600; symbolic links are left alone. */
export function restrictTree(dir: string): void {
  const restrict = (p: string, want: number, current: number) => {
    if ((current & 0o777) !== want) fs.chmodSync(p, want);
  };
  const walk = (folder: string) => {
    restrict(folder, 0o700, fs.statSync(folder).mode);
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const p = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) restrict(p, 0o600, fs.statSync(p).mode);
    }
  };
  walk(dir);
}
