import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OutgoingWhatsApp, Provider, ProviderContext } from '../../src/channels/provider-port.js';
import { loadConfig } from '../../src/config.js';
import { twilio as twilioModule } from '../../src/providers/twilio.js';
import { startTwilioPrism, type PrismMock } from '../support/prism.js';
import { twilioSmsSettings } from '../support/provider-settings.js';
import { localServer, recordingContext, replyJson } from './support.js';

const accountSid = 'AC0123456789abcdef0123456789abcdef';
const authToken = 'test-auth-token-0123456789abcdef';
const contentSid = 'HX0123456789abcdef0123456789abcdef';
const callbackUrl = 'https://otp.example.org/callbacks/twilio';

const message: OutgoingWhatsApp = {
  channel: 'whatsapp',
  sendId: 'send-1',
  verificationId: 'ver-1',
  to: '+2348012345678',
  from: '+2349010000000',
  code: '482913',
  locale: null,
  text: '482913 is your verification code.',
};

function createTwilio(baseUrl: string, context: ProviderContext = recordingContext(callbackUrl)): Provider {
  const { settings } = twilioModule;
  return twilioModule.create(
    {
      TWILIO_ACCOUNT_SID: accountSid,
      TWILIO_AUTH_TOKEN: authToken,
      TWILIO_BASE_URL: settings.TWILIO_BASE_URL.parse(baseUrl),
      TWILIO_MESSAGING_SERVICE_SID: undefined,
      TWILIO_WHATSAPP_SENDER: settings.TWILIO_WHATSAPP_SENDER.parse('+14155238886'),
      TWILIO_WHATSAPP_CONTENT_SID: settings.TWILIO_WHATSAPP_CONTENT_SID.parse(contentSid),
    },
    context,
  );
}

describe("twilio WhatsApp against Prism serving Twilio's OpenAPI description (api v2010)", () => {
  let prism: PrismMock;
  before(async () => {
    prism = await startTwilioPrism();
  });
  after(() => prism.stop());

  it('sends a message Prism accepts as valid against the description, and reads the sid it answers', async () => {
    const provider = createTwilio(prism.url);
    try {
      const result = await provider.send(message, AbortSignal.timeout(10_000));
      assert.equal(result.kind, 'accepted', `${JSON.stringify(result)} ${prism.output().slice(-1500)}`);
      assert.match(result.kind === 'accepted' ? result.messageId : '', /^(SM|MM)[0-9a-f]{32}$/i);
    } finally {
      await provider.stop();
    }
  });
});

/** Every field Twilio documents for a WhatsApp template send, read back by a local server. */
describe('twilio WhatsApp: a Content SID the description refuses', () => {
  let prism: PrismMock;
  before(async () => {
    prism = await startTwilioPrism();
  });
  after(() => prism.stop());

  it('is refused by Prism (422) and is permanent', async () => {
    const { settings } = twilioModule;
    // Past the settings' own check, to see the peer refuse it.
    const provider = twilioModule.create(
      {
        TWILIO_ACCOUNT_SID: accountSid,
        TWILIO_AUTH_TOKEN: authToken,
        TWILIO_BASE_URL: settings.TWILIO_BASE_URL.parse(prism.url),
        TWILIO_MESSAGING_SERVICE_SID: undefined,
        TWILIO_WHATSAPP_SENDER: '+14155238886',
        TWILIO_WHATSAPP_CONTENT_SID: 'HX123',
      },
      recordingContext(callbackUrl),
    );
    try {
      const result = await provider.send(message, AbortSignal.timeout(10_000));
      assert.equal(result.kind, 'permanent');
      assert.match(result.kind === 'permanent' ? result.reason : '', /HTTP 422/);
    } finally {
      await provider.stop();
    }
  });
});

describe('twilio WhatsApp: what is sent', () => {
  const server = localServer();
  it('posts whatsapp: addresses, the Content SID with the code as variable 1, and the signed StatusCallback', async () => {
    server.handler = (_req, res) => replyJson(res, 201, { sid: `SM${'a'.repeat(32)}`, status: 'queued' });
    const provider = createTwilio(server.url);
    try {
      const result = await provider.send(message, AbortSignal.timeout(10_000));
      assert.deepEqual(result, { kind: 'accepted', messageId: `SM${'a'.repeat(32)}` });
      const [seen] = server.seen;
      assert.ok(seen);
      assert.equal(seen.url, `/2010-04-01/Accounts/${accountSid}/Messages.json`);
      assert.equal(seen.headers.authorization, `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`);
      assert.deepEqual(Object.fromEntries(seen.form), {
        To: 'whatsapp:+2348012345678',
        From: 'whatsapp:+14155238886',
        ContentSid: contentSid,
        ContentVariables: '{"1":"482913"}',
        StatusCallback: callbackUrl,
      });
    } finally {
      await provider.stop();
    }
  });

  it('a recipient not on WhatsApp (63003) is permanent, a channel rate limit (63018) transient', async () => {
    for (const [code, kind] of [[63003, 'permanent'], [63018, 'transient']] as const) {
      server.handler = (_req, res) => replyJson(res, 400, { code, message: 'x', status: 400 });
      const provider = createTwilio(server.url);
      try {
        assert.equal((await provider.send(message, AbortSignal.timeout(10_000))).kind, kind, String(code));
      } finally {
        await provider.stop();
      }
    }
  });
});

describe('twilio in WHATSAPP_PROVIDER', () => {
  it('needs TWILIO_WHATSAPP_SENDER and TWILIO_WHATSAPP_CONTENT_SID; for SMS alone it does not', () => {
    assert.doesNotThrow(() => loadConfig(twilioSmsSettings));
    assert.throws(
      () => loadConfig({ ...twilioSmsSettings, WHATSAPP_PROVIDER: 'twilio' }),
      /TWILIO_WHATSAPP_SENDER: required by the twilio provider for WHATSAPP_PROVIDER[\s\S]*TWILIO_WHATSAPP_CONTENT_SID: required/,
    );
    const config = loadConfig({ ...twilioSmsSettings, WHATSAPP_PROVIDER: 'twilio', TWILIO_WHATSAPP_SENDER: '+14155238886', TWILIO_WHATSAPP_CONTENT_SID: contentSid });
    assert.deepEqual(config.providers.whatsapp.map((p) => p.module.name), ['twilio']);
  });
});
