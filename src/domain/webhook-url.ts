/** Why a webhook address (a create's webhookUrl, a client's default) is refused, or null: absolute http(s), no credentials, at most 2048 characters. */
export function webhookUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  // The URL parser would quietly drop or encode these; they have no place in an address, and NUL cannot be stored.
  if (/[\u0000-\u0020\u007f]/.test(raw)) return 'must not contain spaces or control characters';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not contain credentials';
  if (!url.hostname) return 'must name a host';
  return null;
}
