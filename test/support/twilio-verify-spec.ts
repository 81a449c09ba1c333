import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { repoRoot } from './processes.js';

/** Twilio's own OpenAPI description of Verify v2, as Twilio publishes it (in @twilio-alpha/mcp). */
export const twilioVerifyV2Spec = path.join(repoRoot, 'node_modules/@twilio-alpha/mcp/twilio-oai/spec/json/twilio_verify_v2.json');

/**
 * Twilio's error shape. Twilio's description holds no error schema (its operations document success answers
 * only), so this one is written from Twilio's error docs and from what twilio-node's RestException reads.
 */
const twilioErrorSchema = {
  type: 'object',
  required: ['code', 'message', 'more_info', 'status'],
  properties: {
    code: { type: 'integer' },
    message: { type: 'string', minLength: 1 },
    more_info: { type: 'string', format: 'uri' },
    status: { type: 'integer' },
  },
};

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Validates answers against the schemas of Twilio's Verify v2 description, by path template, method and status. */
export class TwilioVerifySpec {
  private readonly ajv: Ajv;
  private readonly paths: string[];
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly error: ValidateFunction;

  constructor() {
    const spec = JSON.parse(fs.readFileSync(twilioVerifyV2Spec, 'utf8')) as { paths: Record<string, unknown> };
    // x-twilio keywords are not JSON Schema's (strict off); `nullable` is OpenAPI 3.0's, turned into JSON Schema's.
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    // Twilio's own format for its `links` objects (a map of names to URLs); formats apply to strings, so it checks nothing.
    this.ajv.addFormat('uri-map', true);
    this.ajv.addSchema({ ...(withoutNullable(spec) as object), $id: 'twilio_verify_v2.json' });
    this.paths = Object.keys(spec.paths);
    this.error = this.ajv.compile(twilioErrorSchema);
  }

  /** The description's path template a concrete path matches, e.g. /v2/Services/{ServiceSid}/Verifications. */
  templateOf(pathname: string): string {
    const found = this.paths.find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname));
    assert.ok(found, `no path of Twilio's description matches ${pathname}`);
    return found;
  }

  /** Asserts that an answer is what Twilio's description says for it (2xx), or Twilio's error shape (4xx, 5xx). */
  check(method: string, url: string, status: number, body: string): void {
    const parsed: unknown = JSON.parse(body);
    if (status >= 400) {
      assert.ok(this.error(parsed), `${method} ${url} ${status}: not Twilio's error shape: ${this.ajv.errorsText(this.error.errors)} in ${body}`);
      assert.equal((parsed as { status: number }).status, status, 'the body\'s status is the HTTP status');
      return;
    }
    const template = this.templateOf(new URL(url).pathname);
    const pointer = ['paths', template, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema']
      .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
      .join('/');
    const key = `twilio_verify_v2.json#/${pointer}`;
    let validate = this.cache.get(key);
    if (!validate) {
      const schema = this.ajv.getSchema(key);
      assert.ok(schema, `Twilio's description has no ${status} answer for ${method} ${template}`);
      validate = schema;
      this.cache.set(key, validate);
    }
    assert.ok(validate(parsed), `${method} ${url} ${status}: ${this.ajv.errorsText(validate.errors)} in ${body}`);
  }
}

/**
 * OpenAPI 3.0's `nullable: true` as JSON Schema says it: `type: [T, "null"]`, and nothing at all beside no type
 * (such a property may hold anything, null included).
 */
function withoutNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutNullable);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (k !== 'nullable') out[k] = withoutNullable(v);
  if (Reflect.get(node, 'nullable') === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}
