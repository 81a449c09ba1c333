/** The names of the parameters in a request URL's query string (none when it has no query). */
export function queryParameterNames(url: string): Set<string> {
  const q = url.indexOf('?');
  if (q < 0) return new Set();
  return new Set(new URLSearchParams(url.slice(q + 1)).keys());
}
