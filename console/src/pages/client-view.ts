import type { ClientSettingsView } from '../../../src/domain/client-settings.js';

/** A client's settings as `clients show` gives them: the CAPTCHA secret only by its first characters. */
export type Settings = ClientSettingsView;

/** `clients show`. */
export interface ClientDetailView {
  readonly clientId: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly disabledAt: string | null;
  readonly createdAt: string;
  readonly settings: Settings;
  /** What its codes cost today and this month, beside its budgets (only with a budget). */
  readonly budgets?: readonly { readonly period: 'day' | 'month'; readonly starts: string; readonly limit: string | null; readonly spent: string }[];
}
