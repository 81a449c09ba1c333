/** What a relay answered a signed request: its status, and for a refusal its message and Retry-After. */
export interface RelayAnswer {
  readonly status: number;
  readonly message?: string;
  readonly retryAfterSeconds?: number;
}

/**
 * Signed relay requests seen (port; src/store/relay-request-store.ts): a request a sender signed once (Supabase's
 * webhook-id, ZITADEL's signature) is relayed once, however many copies of it arrive within its signature's window.
 */
export interface RelayRequests {
  /** Claims a request for this process to relay; when seen before, the answer its first copy got (null: still being made). */
  claim(clientId: string, key: string, now: Date): Promise<{ readonly kind: 'claimed' } | { readonly kind: 'seen'; readonly answer: RelayAnswer | null }>;
  /** Records the answer the claimed request got, for its copies. */
  answered(clientId: string, key: string, answer: RelayAnswer): Promise<void>;
  /** Forgets requests older than `before` (their signatures are refused by then anyway). */
  prune(before: Date): Promise<void>;
}

/** How long a request is remembered: longer than any relay's signature tolerance (5 minutes) and its skew. */
export const relayRequestMemoryMs = 10 * 60_000;

/** How far ahead of this machine's clock a signed request's timestamp may be. */
export const relayFutureToleranceSeconds = 30;
