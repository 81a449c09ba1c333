/** The session cookie's name: with Secure, `__Host-` binds it to this host, path / and https (RFC 6265bis). */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-otp-console' : 'otp-console';
}

/** A cookie's value from a Cookie header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's request carries it), Secure
 * outside development, and no Max-Age: the server's idle and absolute expiry end a session, the browser's close too.
 */
export function sessionCookie(name: string, value: string, secure: boolean): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** Clears the session cookie in the browser (the session itself is deleted on the server). */
export function clearedCookie(name: string, secure: boolean): string {
  return `${name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}
