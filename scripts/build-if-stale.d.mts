/** Types of build-if-stale.mjs (plain JavaScript, so that it runs before anything is compiled). */
export function buildInputs(root: string): string[];
export function staleness(root: string): string | null;
export function build(root: string): void;
export function buildIfStale(root: string, options?: { force?: boolean; log?: (text: string) => void }): 'built' | 'fresh';
