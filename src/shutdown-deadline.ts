import type { Logger } from 'pino';

/**
 * SIGTERM's one deadline (SHUTDOWN_GRACE_MS): the orderly stop (requests in flight, then the workers, then the
 * providers) gets that long in all, and the process then exits whatever still waits. Nothing is lost by that:
 * a send or a webhook delivery still waiting keeps its claim in the database and is taken again after it, which
 * is what happens after a crash. An orchestrator that kills at its own grace (Kubernetes: 30 s) thus always sees
 * an exit, never a kill.
 */
export function stopWithin(graceMs: number, logger: Logger, stop: () => Promise<void>, exit: (code: number) => void = process.exit): void {
  const started = Date.now();
  const deadline = setTimeout(() => {
    logger.warn(
      { graceMs },
      'SHUTDOWN_GRACE_MS is over: exiting with work still in flight; sends and webhook deliveries not finished are taken again after their claim',
    );
    exit(0);
  }, graceMs);
  deadline.unref();
  stop().then(
    () => {
      clearTimeout(deadline);
      logger.info({ ms: Date.now() - started }, 'stopped');
      exit(0);
    },
    (err: unknown) => {
      clearTimeout(deadline);
      logger.error({ err }, 'error during shutdown');
      exit(1);
    },
  );
}
