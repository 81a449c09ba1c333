/** One change made by an operator (console) or through the CLI: who, what, on what, when, how it ended. */
export interface AuditEntry {
  readonly at: string;
  /** `operator:<email>` for the console, `cli` for the otp-service command. */
  readonly actor: string;
  /** The operator command's name (clients.disable, blocks.lift, ...) or a console action (console.sign-in). */
  readonly action: string;
  /** What it changed: a client id, a prefix, an event id; never a secret. */
  readonly target: string | null;
  /** `ok`, or the error the command answered. */
  readonly outcome: string;
}

/** The audit log (port; src/store/audit-store.ts). */
export interface AuditLog {
  record(entry: AuditEntry): Promise<void>;
  /** The newest entries first. */
  latest(limit: number): Promise<AuditEntry[]>;
}

/** The most entries `otp-service audit` shows unless told otherwise, and the most it will show. */
export const defaultAuditLimit = 50;
export const maxAuditLimit = 10_000;
