/** What a 429 RATE_LIMITED says, by the limit that refused (create and resend share the client's daily quota). */
export const rateLimitMessages = {
  phone: 'Too many verifications for this phone number; retry later',
  'daily-quota': 'This client has made its sends for today (CLIENT_DAILY_SEND_LIMIT); retry after midnight UTC',
  conversion:
    "Too many verifications towards this number's country: few of its codes are verified lately, so it is throttled (MIN_CONVERSION); retry later",
  cooldown: 'The code was sent moments ago; retry later',
  'max-sends': 'This verification has no send left (OTP_MAX_SENDS); start a new one once it is over',
} as const;
