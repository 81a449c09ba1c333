/** A client's settings as `clients show` gives them: the CAPTCHA secret only by its first characters. */
export interface Settings {
  readonly appName: string | null;
  readonly webotpDomain: string | null;
  readonly androidAppHash: string | null;
  readonly defaultWebhookUrl: string | null;
  readonly revealCode: boolean;
  readonly allowedCountries: readonly string[] | null;
  readonly defaultLocale: string | null;
  readonly templates: Readonly<Record<string, string>>;
  readonly voiceTemplates: Readonly<Record<string, string>>;
  readonly testNumbers: Readonly<Record<string, string>>;
  readonly fallback: readonly string[];
  readonly fallbackAfterSeconds: number | null;
  readonly captcha: { readonly provider: string; readonly secret: string; readonly minScore: number; readonly when: string } | null;
}

/** `clients show`. */
export interface ClientDetailView {
  readonly clientId: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly disabledAt: string | null;
  readonly createdAt: string;
  readonly settings: Settings;
}
