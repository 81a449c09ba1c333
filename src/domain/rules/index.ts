import { captchaRule } from './captcha.js';
import { callForwardingRule, simSwapRule } from './carrier.js';
import { conversionRule } from './conversion.js';
import { decisionRule } from './decision.js';
import { countriesRule, lineTypesRule } from './destination.js';
import { listsRule } from './lists.js';
import { phoneRule } from './phone.js';
import { prefixRule } from './prefix.js';
import { abroadRule, budgetRule, dailyQuotaRule, newCountryRule } from './quotas.js';
import { resendThrottleRule } from './resend-throttle.js';
import { deviceRule, ipRule, networkRule } from './signals.js';
import type { AnySendRule } from './send-rule.js';

/**
 * The risk rules every send decision runs (contract 18), in the order they are heard: those that ask outside the
 * database first (the CAPTCHA before anything else, the client's own say last of them), then those judged from the
 * transaction's read; among these, the first one enforced that objects refuses the send. A new rule is one module
 * and one line here (and its name and factor in `riskRules`).
 */
export const sendRules: readonly AnySendRule[] = [
  captchaRule,
  countriesRule,
  lineTypesRule,
  listsRule,
  simSwapRule,
  callForwardingRule,
  decisionRule,
  prefixRule,
  ipRule,
  networkRule,
  deviceRule,
  conversionRule,
  newCountryRule,
  abroadRule,
  resendThrottleRule,
  phoneRule,
  dailyQuotaRule,
  budgetRule,
];
