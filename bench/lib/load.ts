import autocannon from 'autocannon';

/** What one load run measured. */
export interface LoadResult {
  /** Responses per second over the whole run (every status). */
  readonly rps: number;
  /** 2xx responses per second. */
  readonly okRps: number;
  /** Latency percentiles in milliseconds, as autocannon measured them. */
  readonly p50: number;
  readonly p99: number;
  readonly responses: number;
  readonly statuses: Readonly<Record<string, number>>;
  /** Connection errors and timeouts. */
  readonly errors: number;
  readonly seconds: number;
}

export interface LoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  /** Stop after this many requests instead of after `seconds`. */
  readonly amount?: number;
  /** Requests per second over all connections (default: as fast as the server answers). */
  readonly overallRate?: number;
  readonly method?: 'GET' | 'POST';
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Changes each request before it is sent: its path, body and headers. */
  readonly setup?: (request: autocannon.Request, context: Record<string, unknown>) => autocannon.Request;
  /** Sees each response (its body is only read when this is given). */
  readonly onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
}

/** One autocannon run; requests are varied per call through `setup`. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { setup, onResponse } = options;
  const request: autocannon.Request = {
    method: options.method ?? 'GET',
    path: options.path,
    ...(options.headers && { headers: options.headers }),
    ...(options.body !== undefined && { body: options.body }),
    ...(setup && {
      setupRequest: (req: autocannon.Request, context: object) => setup(req, context as Record<string, unknown>),
    }),
    ...(onResponse && {
      onResponse: (status: number, body: string, context: object) =>
        onResponse(status, body, context as Record<string, unknown>),
    }),
  };
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    ...(options.amount !== undefined && { amount: options.amount }),
    ...(options.overallRate !== undefined && { overallRate: options.overallRate }),
    timeout: 30,
    requests: [request],
  });
  const statuses: Record<string, number> = {};
  let responses = 0;
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) {
    const count = stat.count ?? 0;
    statuses[code] = count;
    responses += count;
  }
  const seconds = result.duration > 0 ? result.duration : options.seconds;
  return {
    rps: responses / seconds,
    okRps: result['2xx'] / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    responses,
    statuses,
    errors: result.errors,
    seconds,
  };
}

/** A short run that is thrown away, so JIT warm-up and connection set-up are not measured. */
export async function warmUp(options: LoadOptions, seconds = 2): Promise<void> {
  await runLoad({ ...options, seconds, amount: undefined, onResponse: undefined });
}
