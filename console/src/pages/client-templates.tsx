import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';
import type { ClientDetailView, Settings } from './client-view.js';

type Channel = 'sms' | 'voice';

/** What `clients templates preview` says: an SMS's encoding and parts, or (voice) only the sentence a call says. */
interface Preview {
  readonly locale: string;
  readonly encoding?: string;
  readonly parts?: number;
  readonly sample: string;
}

const starting: Readonly<Record<Channel, string>> = {
  sms: '{code} is your {app} code. It expires in {minutes} minutes.',
  voice: 'Your {app} code is {code}.',
};

/**
 * A client's templates of one channel at a time, as `clients templates ... [--channel voice]` manages them: the
 * saved ones with Remove, and a form whose live preview is the command's own check.
 */
export function Templates({ client, onSaved }: { client: ClientDetailView; onSaved: (s: Settings) => void }) {
  const [channel, setChannel] = useState<Channel>('sms');
  const [locale, setLocale] = useState('en');
  const [text, setText] = useState(client.settings.templates.en ?? starting.sms);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [state, setState] = useState<string | null>(null);
  const voice = channel === 'voice';
  const saved = voice ? client.settings.voiceTemplates : client.settings.templates;
  const channelBody = voice ? { channel: 'voice' } : {};
  // The live preview: the same check as saving, a moment after the last key press.
  useEffect(() => {
    // An answer that comes after the text or channel changed again is dropped.
    let live = true;
    const timer = setTimeout(() => {
      data<Preview>('POST', `/clients/${client.clientId}/templates/preview`, { locale, template: text, ...channelBody }).then(
        (p) => {
          if (!live) return;
          setPreview(p);
          setProblem(null);
        },
        (err) => {
          if (!live) return;
          setPreview(null);
          setProblem(messageOf(err));
        },
      );
    }, 250);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [locale, text, channel, client.settings]);
  const choose = (next: Channel) => {
    setChannel(next);
    setPreview(null);
    setState(null);
    setText((next === 'voice' ? client.settings.voiceTemplates : client.settings.templates)[locale] ?? starting[next]);
  };
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      await data('PUT', `/clients/${client.clientId}/templates/${encodeURIComponent(locale)}`, { template: text, ...channelBody });
      onSaved((await data<ClientDetailView>('GET', `/clients/${client.clientId}`)).settings);
      setState(voice ? `Voice template ${locale} saved: the next call in ${locale} says it.` : `Template ${locale} saved: the next SMS in ${locale} uses it.`);
    } catch (err) {
      setState(`Not saved: ${messageOf(err)}`);
    }
  };
  const remove = async (l: string) => {
    const query = voice ? '?channel=voice' : '';
    try {
      onSaved(await data<Settings>('DELETE', `/clients/${client.clientId}/templates/${encodeURIComponent(l)}${query}`));
      setState(`${voice ? 'Voice template' : 'Template'} ${l} removed.`);
    } catch (err) {
      setState(`Not removed: ${messageOf(err)}`);
    }
  };
  const kind = voice ? 'voice' : 'SMS';
  const templates = Object.entries(saved);
  return (
    <section aria-labelledby="templates-title">
      <h2 id="templates-title">Templates</h2>
      <fieldset class="channels">
        <legend>Channel</legend>
        <label class="check"><input type="radio" name="template-channel" value="sms" checked={!voice} onChange={() => choose('sms')} /> SMS</label>
        <label class="check"><input type="radio" name="template-channel" value="voice" checked={voice} onChange={() => choose('voice')} /> Voice</label>
      </fieldset>
      {templates.length === 0 ? (
        <p id="no-templates">No {kind} templates: {voice ? 'calls say the default sentence of their language' : 'texts are the English default'}.</p>
      ) : (
        <table id="templates" data-channel={channel}>
          <caption>Saved {kind} templates</caption>
          <thead><tr><th scope="col">Locale</th><th scope="col">Text</th><th scope="col">Remove</th></tr></thead>
          <tbody>
            {templates.map(([l, t]) => (
              <tr key={l}><th scope="row">{l}</th><td>{t}</td><td><button type="button" onClick={() => void remove(l)} aria-label={`Remove the ${l} ${kind} template`}>Remove</button></td></tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={save}>
        <label for="template-locale">Locale (BCP 47)</label>
        <input id="template-locale" value={locale} onInput={(e) => setLocale(e.currentTarget.value)} />
        <label for="template-text">{voice ? 'Words, with {code} (read digit by digit) and {app}' : 'Text, with {code}, {minutes} and {app}'}</label>
        <textarea id="template-text" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <div class="preview" aria-live="polite" id="template-preview">
          {preview && voice && (
            <>
              <p>A call says, VOICE_REPEAT times:</p>
              <pre id="preview-sample">{preview.sample}</pre>
            </>
          )}
          {preview && !voice && (
            <>
              <p><span id="preview-encoding">{preview.encoding}</span>, <span id="preview-parts">{preview.parts}</span> SMS part(s) at most. A user reads:</p>
              <pre id="preview-sample">{preview.sample}</pre>
            </>
          )}
          {problem && <p class="error" id="preview-problem">{problem}</p>}
        </div>
        <button type="submit">Save {kind} template</button>
      </form>
      {state && <p role="status" id="template-state">{state}</p>}
    </section>
  );
}
