/** What a 429 RATE_LIMITED says, by the limit that refused (create and resend share the client's daily quota). */
export const rateLimitMessages = {
  phone: 'Too many verifications for this phone number; retry later',
  'daily-quota':
    "This client has made all the sends it may make today (the service's CLIENT_DAILY_SEND_LIMIT, 10000 a day unless its operator set another); retry after midnight UTC, or ask the operator to raise CLIENT_DAILY_SEND_LIMIT",
  budget: "This client's sends have reached the spend limit its operator set for the period (its budget); retry when the period ends, or ask the operator to raise it",
  conversion:
    "Too many verifications towards this number's country, or from this client: few of their codes are verified lately, so they are throttled (MIN_CONVERSION); retry later",
  'new-country':
    "Too many verifications this hour towards a country where none of this client's codes was verified lately (NEW_COUNTRY_LIMIT_COUNT); retry after the hour, or once a code there is verified",
  abroad:
    "Too many verifications this hour towards this number's country from addresses in other countries, by users with no verified history (ABROAD_LIMIT_SHARE); retry after the hour",
  ip: "Too many verifications from this end user's address (IP_LIMIT_COUNT); retry later",
  network: "Too many verifications from this end user's network, the /24 or /48 of its address (IP_PREFIX_LIMIT_COUNT); retry later",
  device: "Too many verifications from this end user's device (DEVICE_LIMIT_COUNT); retry later",
  cooldown: 'The code was sent moments ago; retry later',
  'max-sends': 'This verification has no send left (OTP_MAX_SENDS); start a new one once it is over',
  'unknown-user':
    "Few of this client's resent codes are verified lately, so a code of a user with no verified history is resent only so often, and not at all when it was asked for from an address in another country than its number's (MIN_RESEND_SAMPLE, UNKNOWN_USER_RESENDS); type the code already sent, or start a new verification once this one is over",
} as const;
