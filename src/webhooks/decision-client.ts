import type { Clock } from '../domain/ports.js';
import type { CustomerDecisions, DecisionAnswer, DecisionQuestion, DecisionSetting } from '../domain/decision.js';
import type { WebhookHttpClient } from './guarded-client.js';
import type { WebhookSecrets } from './outbox.js';
import { activeSecrets, signedHeaders } from './signer.js';

/**
 * The decision webhook (contract 18): `{ type: "otp.decision", timestamp, data }` POSTed to the client's URL,
 * signed as its webhooks are (Standard Webhooks, its webhook secret), through the webhooks' guarded client (no
 * private address, no redirect); the answer `{ "decision": "allow" | "deny" }` with a 2xx status within the
 * client's time-out counts, anything else is an error or an invalid answer.
 */
export class DecisionWebhookClient implements CustomerDecisions {
  constructor(
    private readonly http: WebhookHttpClient,
    private readonly secretsOf: WebhookSecrets,
    private readonly clock: Clock,
  ) {}

  async ask(clientId: string, setting: DecisionSetting, question: DecisionQuestion): Promise<DecisionAnswer> {
    const secrets = await this.secretsOf(clientId);
    if (!secrets) return 'error';
    const at = this.clock.now();
    const body = JSON.stringify({ type: 'otp.decision', timestamp: at.toISOString(), data: question });
    // One id a question: a receiver that keeps ids to refuse replays never sees two alike.
    const headers = signedHeaders(activeSecrets(secrets, at), `decision_${question.id}`, at, body);
    const answered = await this.http.post({ url: setting.url, headers, body }, { timeoutMs: setting.timeoutMs, keepBody: true });
    if (answered.kind === 'error') return answered.timedOut ? 'timeout' : 'error';
    if (answered.status < 200 || answered.status > 299) return 'error';
    try {
      const decision = (JSON.parse(answered.body ?? '') as { decision?: unknown }).decision;
      return decision === 'allow' || decision === 'deny' ? decision : 'invalid';
    } catch {
      return 'invalid';
    }
  }
}
