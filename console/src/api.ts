/** The console API's error shape (the contract's). */
export interface ApiError {
  readonly status: number;
  readonly message: string;
  readonly code: string;
}

let csrfToken: string | null = null;

/** Kept from the sign-in or session answer: every change sends it back in X-CSRF-Token. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export class ApiFailure extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

/** A call to the console API: JSON in and out, the session cookie, and the CSRF token on every change. */
export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(`/console/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (!res.ok) {
    const error = json.error as { code?: string } | undefined;
    throw new ApiFailure({ status: res.status, message: String(json.message ?? res.statusText), code: error?.code ?? 'ERROR' });
  }
  return json as T;
}

/** The `data` of a command's answer. */
export async function data<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  return (await api<{ data: T }>(method, path, body)).data;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
