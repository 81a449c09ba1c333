import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import { repoRoot } from './processes.js';
import { startPrismOn, type PrismMock } from './prism.js';

/** CAMARA's one-time-password-sms description, version 1.1.1 (release r3.2), kept unchanged in test/peers/camara. */
export const camaraOtpSpec = path.join(repoRoot, 'test/peers/camara/one-time-password-sms.yaml');

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

interface Operation {
  requestBody: { content: Record<string, { schema: object }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: object }> }>;
}

/** Validates requests and answers of /one-time-password-sms/v1 against CAMARA's own description. */
export class CamaraSpec {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly doc: { paths: Record<string, { post: Operation }>; components: { responses: Record<string, { content?: Record<string, { schema: object }> }> } };

  constructor() {
    this.doc = parse(fs.readFileSync(camaraOtpSpec, 'utf8')) as typeof this.doc;
    addFormats(this.ajv);
    this.ajv.addSchema({ ...this.doc, $id: 'camara.json' });
  }

  private compile(pointer: string): ValidateFunction {
    const validate = this.ajv.getSchema(`camara.json#${pointer}`);
    assert.ok(validate, `no schema at ${pointer}`);
    return validate;
  }

  /** Whether a request body is one the description allows (its errors otherwise). */
  requestProblems(operation: '/send-code' | '/validate-code', body: unknown): string | null {
    const validate = this.compile(`/paths/${operation.replace(/\//g, '~1')}/post/requestBody/content/application~1json/schema`);
    return validate(body) ? null : this.ajv.errorsText(validate.errors);
  }

  /** Asserts that an answer is one the description documents for the operation, body and status. */
  checkAnswer(operation: '/send-code' | '/validate-code', status: number, body: string): void {
    const documented = this.doc.paths[operation]?.post.responses[String(status)];
    assert.ok(documented, `${operation} does not document a ${status}`);
    const name = documented.$ref?.split('/').at(-1);
    const content = name ? this.doc.components.responses[name]?.content : documented.content;
    if (!content) {
      assert.equal(body, '', `${operation} ${status} has no body in the description`);
      return;
    }
    const pointer = name
      ? `/components/responses/${name}/content/application~1json/schema`
      : `/paths/${operation.replace(/\//g, '~1')}/post/responses/${status}/content/application~1json/schema`;
    const validate = this.compile(pointer);
    assert.ok(validate(JSON.parse(body)), `${operation} ${status}: ${this.ajv.errorsText(validate.errors)} in ${body}`);
  }
}

/** CAMARA's SIM Swap description, version 2.1.0 (release r3.3), kept unchanged in test/peers/camara. */
export const camaraSimSwapSpec = path.join(repoRoot, 'test/peers/camara/sim-swap.yaml');
/** CAMARA's Call Forwarding Signal description, version 0.4.0 (release r3.3), kept unchanged in test/peers/camara. */
export const camaraCallForwardingSpec = path.join(repoRoot, 'test/peers/camara/call-forwarding-signal.yaml');
/** CAMARA's Number Verification description, version 2.1.0 (release r3.2), kept unchanged in test/peers/camara. */
export const camaraNumberVerificationSpec = path.join(repoRoot, 'test/peers/camara/number-verification.yaml');

/**
 * Prism serving a CAMARA description whose `operation` (a path of it, POST) gains named examples of its 200 answer,
 * which the published description leaves without any (Prism would always answer the one it makes up). The schemas
 * are left as published: Prism still checks every request against them, and a test picks an example per request
 * with `Prefer: example=NAME`.
 */
export async function startCamaraPrism(spec: string, operation: string, examples: Record<string, unknown>): Promise<PrismMock> {
  const doc = parse(fs.readFileSync(spec, 'utf8')) as { paths: Record<string, { post: { responses: Record<string, { content: Record<string, Record<string, unknown>> }> } }> };
  const answer = doc.paths[operation]?.post.responses['200']?.content['application/json'];
  assert.ok(answer, `${spec} has no JSON 200 answer at ${operation}`);
  answer.examples = Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }]));
  return startPrismOn(path.basename(spec).replace(/\.yaml$/, '.json'), JSON.stringify(doc));
}
