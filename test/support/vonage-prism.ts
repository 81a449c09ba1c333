import fs from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { startPrismOn, type PrismMock } from './prism.js';
import { repoRoot } from './processes.js';

/**
 * Vonage's own OpenAPI description of the Voice API (Nexmo/api-specification, definitions/voice.yml, MIT), kept
 * as published in test/peers/vonage/voice.yml, served by Prism with a small overlay of three fixes, and no more:
 * - its server is https://api.nexmo.com/v1/calls and its paths start at `/`: the paths are put under `/v1/calls`,
 *   where the API really answers, so that the provider's own request path is the one checked;
 * - `to[]` is a oneOf of endpoints told apart only by `type`, which each describes ("Must be `phone`") but none
 *   constrains, so a phone endpoint also matches the SIP one (whose only required field is `type`) and every
 *   valid request fails "must match exactly one schema": each `type` gets the one value its description names;
 * - `conversation_uuid` is declared `format: uuid` while its own example (and what Vonage returns) is
 *   `CON-<uuid>`, so Prism's answer fails its own check: the format is dropped.
 */
export const vonageVoiceSpec = path.join(repoRoot, 'test/peers/vonage/voice.yml');

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function withOverlay(description: unknown): unknown {
  if (!isJson(description) || !isJson(description.paths) || !isJson(description.components) || !isJson(description.components.schemas)) {
    throw new Error('not the Voice API description');
  }
  description.paths = Object.fromEntries(Object.entries(description.paths).map(([p, item]) => [`/v1/calls${p === '/' ? '' : p}`, item]));
  const schemas = description.components.schemas;
  const endpointTypes: Record<string, string> = { EndpointPhoneTo: 'phone', EndpointPhoneFrom: 'phone', EndpointSip: 'sip', EndpointWebsocket: 'websocket', EndpointVBCExtension: 'vbc' };
  for (const [name, type] of Object.entries(endpointTypes)) {
    const schema = schemas[name];
    if (!isJson(schema) || !isJson(schema.properties) || !isJson(schema.properties.type)) throw new Error(`no ${name}.type in the description`);
    schema.properties.type.enum = [type];
  }
  const conversation = schemas.conversation_uuid;
  if (!isJson(conversation)) throw new Error('no conversation_uuid in the description');
  delete conversation.format;
  return description;
}

export async function startVonageVoicePrism(): Promise<PrismMock> {
  return startPrismOn('voice.yml', stringify(withOverlay(parse(fs.readFileSync(vonageVoiceSpec, 'utf8')))));
}

/**
 * Vonage's own OpenAPI description of the SMS API (Nexmo/api-specification, definitions/sms.yml, MIT), kept as
 * published in test/peers/vonage/sms.yml, served by Prism with two fixes, and no more:
 * - its server is https://rest.nexmo.com/sms and its one path is `/{format}`: the path is put under `/sms`, where
 *   the API really answers, so that the provider's own request path (`/sms/json`) is the one checked;
 * - the JSON answer to a send is a oneOf of the success (`SMS`) and the error (`Error`) shape, two objects with no
 *   required property that every answer matches both of, so Prism's own example fails "must match exactly one
 *   schema" and every send is a 500: it becomes an anyOf, which still checks the answer against both shapes.
 */
export const vonageSmsSpec = path.join(repoRoot, 'test/peers/vonage/sms.yml');

function withSmsOverlay(description: unknown): unknown {
  if (!isJson(description) || !isJson(description.paths)) throw new Error('not the SMS API description');
  const paths: Json = Object.fromEntries(Object.entries(description.paths).map(([p, item]) => [`/sms${p}`, item]));
  description.paths = paths;
  const send = paths['/sms/{format}'];
  const ok = isJson(send) && isJson(send.post) && isJson(send.post.responses) ? send.post.responses['200'] : null;
  const json = isJson(ok) && isJson(ok.content) ? ok.content['application/json'] : null;
  if (!isJson(json) || !isJson(json.schema) || !Array.isArray(json.schema.oneOf)) throw new Error('no oneOf answer to a send in the description');
  json.schema = { anyOf: json.schema.oneOf };
  return description;
}

export async function startVonageSmsPrism(): Promise<PrismMock> {
  return startPrismOn('sms.yml', stringify(withSmsOverlay(parse(fs.readFileSync(vonageSmsSpec, 'utf8')))));
}

/**
 * Vonage's own OpenAPI description of Verify v2 ("Verify API (v2) - Early Access" 0.0.14, Nexmo/api-specification,
 * MIT), kept as published in test/peers/vonage/verify.v2.yml, served by Prism with one fix, and no more: its
 * server is https://api.nexmo.com/v2/verify and its paths start at `/`: the paths are put under `/v2/verify`, where
 * the API really answers, so that the provider's own request path is the one checked.
 */
export const vonageVerifySpec = path.join(repoRoot, 'test/peers/vonage/verify.v2.yml');

function withVerifyOverlay(description: unknown): unknown {
  if (!isJson(description) || !isJson(description.paths)) throw new Error('not the Verify v2 description');
  description.paths = Object.fromEntries(Object.entries(description.paths).map(([p, item]) => [`/v2/verify${p === '/' ? '' : p}`, item]));
  return description;
}

export async function startVonageVerifyPrism(): Promise<PrismMock> {
  return startPrismOn('verify.v2.yml', stringify(withVerifyOverlay(parse(fs.readFileSync(vonageVerifySpec, 'utf8')))));
}
