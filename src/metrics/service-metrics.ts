import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CommitEffects } from '../domain/after-commit.js';
import type { ReceiptObserver } from '../domain/delivery-service.js';
import type { Throttle } from '../domain/conversion.js';
import type { ConversionObserver } from '../domain/conversion-watch.js';
import type { CreateRefusal, ResendRefusal, VerificationObserver } from '../domain/verification-service.js';
import type { FactorEntry } from '../domain/risk.js';
import type { DecisionAnswer } from '../domain/decision.js';
import type { CarrierCheckName, CarrierCheckObserver, CarrierOutcome } from '../domain/carrier-checks.js';
import type { StepAnswer } from '../domain/send-result.js';
import type { HttpObserver } from '../http/app.js';
import type { SendObserver } from '../jobs/send-worker.js';
import type { WebhookObserver } from '../webhooks/delivery-worker.js';

/** Seconds, from a fast local answer to a slow provider or receiver. */
const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Receipts and webhook lag run from seconds to hours (a receipt from a phone switched off, a webhook retried). */
const slowBuckets = [0.05, 0.25, 1, 5, 15, 60, 300, 1800, 3600, 21_600, 86_400];

/**
 * The service's Prometheus metrics (contract 12), in a registry of its own: requests by route and status,
 * verifications by type, country and outcome, sends by provider and outcome, receipt latency, webhook deliveries
 * by outcome and lag. Labels are bounded: routes are Fastify's templates, countries calling codes, providers the
 * configured names; no id, number, code or secret is ever a label.
 */
export class ServiceMetrics
  implements HttpObserver, VerificationObserver, SendObserver, ReceiptObserver, WebhookObserver, ConversionObserver, CarrierCheckObserver
{
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'otp_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly requestSeconds = new Histogram({
    name: 'otp_http_request_duration_seconds',
    help: 'Time from a request received to its answer sent, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  private readonly created = new Counter({
    name: 'otp_verifications_created_total',
    help: 'Verifications created, by type and country calling code',
    labelNames: ['type', 'country'] as const,
    registers: [this.registry],
  });
  private readonly refused = new Counter({
    name: 'otp_creates_refused_total',
    help: 'Creates refused by a limit: destination (country or line type), prefix (blocked prefix), blocked (a block list), phone, daily-quota, budget (the client spend limit), conversion (country throttled), ip (the end user address or its network), device, captcha, decision (the client decision webhook denied it), call-forwarding (a call to a forwarded line)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly resendsRefused = new Counter({
    name: 'otp_resends_refused_total',
    help: 'Resends refused by a limit: cooldown, max-sends (OTP_MAX_SENDS), daily-quota, budget (the client spend limit), new-country, unknown-user (resends throttled for their conversion, MIN_RESEND_SAMPLE), captcha, call-forwarding (a call to a forwarded line)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly decisions = new Counter({
    name: 'otp_decisions_total',
    help: "Answers of clients' decision webhooks: allow, deny, timeout, error (no 2xx answer), invalid (another body)",
    labelNames: ['answer'] as const,
    registers: [this.registry],
  });
  private readonly carrierChecks = new Counter({
    name: 'otp_carrier_checks_total',
    help: "Carrier checks asked of the number's network before a send (a cached answer asks none), by check (sim_swap, call_forwarding) and outcome (flagged, clear, failed, timeout: the send went ahead)",
    labelNames: ['check', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly factors = new Counter({
    name: 'otp_risk_factors_total',
    help: 'Risk factors of the sends judged (creates, resends, workflow steps), by factor, the rule that named it and its mode (enforce: refused or moved on, shadow: sent)',
    labelNames: ['factor', 'rule', 'mode'] as const,
    registers: [this.registry],
  });
  private readonly throttles = new Gauge({
    name: 'otp_country_throttles',
    help: "Countries throttled for their conversion through a provider, by mobile network where it is known ('' for the country's numbers of no known network), as this instance last read them (1 while in force)",
    labelNames: ['region', 'network', 'provider'] as const,
    registers: [this.registry],
  });
  private readonly ended = new Counter({
    name: 'otp_verifications_ended_total',
    help: 'Verifications that reached a final state, by type, country calling code, status and failure reason',
    labelNames: ['type', 'country', 'status', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly sends = new Counter({
    name: 'otp_sends_total',
    help: "Provider calls sending a code, by channel, provider and outcome (accepted, transient, permanent)",
    labelNames: ['channel', 'provider', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly sendSeconds = new Histogram({
    name: 'otp_send_duration_seconds',
    help: 'Time a provider took to answer a send (a call: until it rang or failed), by channel and provider',
    labelNames: ['channel', 'provider'] as const,
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  private readonly receipts = new Counter({
    name: 'otp_receipts_total',
    help: 'Delivery receipts that moved a send, by channel, provider and status',
    labelNames: ['channel', 'provider', 'status'] as const,
    registers: [this.registry],
  });
  private readonly steps = new Counter({
    name: 'otp_fallback_steps_total',
    help: "Workflow steps taken (create fallback), by the step's channel and what moved it (failure: the last step had no provider left; time: FALLBACK_AFTER_SECONDS passed)",
    labelNames: ['channel', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly deliveryFailovers = new Counter({
    name: 'otp_delivery_failovers_total',
    help: "Codes sent once more through a route's next provider because the one before reported no delivery in the route's time (--failover-after), by channel and the two providers",
    labelNames: ['channel', 'from', 'to'] as const,
    registers: [this.registry],
  });
  private readonly sendCosts = new Counter({
    name: 'otp_send_cost_total',
    help: 'What the sends providers took cost, in COST_CURRENCY (their reported price, else the imported one; sends of unknown price add nothing), by channel, provider and country (ISO 3166 alpha-2)',
    labelNames: ['channel', 'provider', 'country'] as const,
    registers: [this.registry],
  });
  private readonly receiptSeconds = new Histogram({
    name: 'otp_receipt_latency_seconds',
    help: 'Time from a provider taking a code to its receipt, by provider and status',
    labelNames: ['provider', 'status'] as const,
    buckets: slowBuckets,
    registers: [this.registry],
  });
  private readonly webhooks = new Counter({
    name: 'otp_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome (delivered, retry, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly webhookLag = new Histogram({
    name: 'otp_webhook_lag_seconds',
    help: 'Time from an event committed to its webhook delivered',
    buckets: slowBuckets,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The exposition text, and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  answered(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.requestSeconds.observe({ method, route }, seconds);
  }

  verificationCreated(type: string, countryCode: string): void {
    this.created.inc({ type, country: countryCode });
  }

  createRefused(reason: CreateRefusal): void {
    this.refused.inc({ reason });
  }

  resendRefused(reason: ResendRefusal): void {
    this.resendsRefused.inc({ reason });
  }

  decisionAnswered(answer: DecisionAnswer): void {
    this.decisions.inc({ answer });
  }

  carrierChecked(check: CarrierCheckName, outcome: CarrierOutcome): void {
    this.carrierChecks.inc({ check, outcome });
  }

  riskFactors(factors: readonly FactorEntry[]): void {
    for (const { factor, rule, mode } of factors) this.factors.inc({ factor, rule, mode });
  }

  throttlesRead(throttles: readonly Throttle[]): void {
    this.throttles.reset();
    for (const t of throttles) this.throttles.set({ region: t.regionCode, network: t.network, provider: t.provider }, 1);
  }

  /** Everything a transaction committed passes here: its events are the verifications that ended. */
  committed(effects: CommitEffects): void {
    for (const event of effects.events) {
      const { data } = event.payload;
      this.ended.inc({ type: data.type, country: data.countryCode, status: data.status, reason: data.failureReason ?? '' });
    }
  }

  /** How long each provider took to answer its sends since this process started: count and mean, per channel. */
  async sendLatency(): Promise<{ channel: string; provider: string; count: number; meanSeconds: number }[]> {
    const { values } = await this.sendSeconds.get();
    const key = (l: Record<string, unknown>) => `${String(l.channel)}\u0000${String(l.provider)}`;
    const sums = new Map<string, number>();
    for (const v of values) if (v.metricName === 'otp_send_duration_seconds_sum') sums.set(key(v.labels), v.value);
    return values
      .filter((v) => v.metricName === 'otp_send_duration_seconds_count' && v.value > 0)
      .map((v) => ({ channel: String(v.labels.channel), provider: String(v.labels.provider), count: v.value, meanSeconds: (sums.get(key(v.labels)) ?? 0) / v.value }));
  }

  sent(channel: string, provider: string, result: StepAnswer, seconds: number): void {
    this.sends.inc({ channel, provider, outcome: result.kind });
    this.sendSeconds.observe({ channel, provider }, seconds);
  }

  receipt(channel: string, provider: string, status: string, secondsSinceSent: number | null): void {
    this.receipts.inc({ channel, provider, status });
    if (secondsSinceSent !== null) this.receiptSeconds.observe({ provider, status }, secondsSinceSent);
  }

  step(channel: string, reason: 'failure' | 'time'): void {
    this.steps.inc({ channel, reason });
  }

  deliveryFailover(channel: string, from: string, to: string): void {
    this.deliveryFailovers.inc({ channel, from, to });
  }

  sendCost(channel: string, provider: string, regionCode: string | null, cost: string): void {
    this.sendCosts.inc({ channel, provider, country: regionCode ?? 'unknown' }, Number(cost));
  }

  webhookAttempt(outcome: 'delivered' | 'retry' | 'failed', lagSeconds: number): void {
    this.webhooks.inc({ outcome });
    if (outcome === 'delivered') this.webhookLag.observe(lagSeconds);
  }
}
