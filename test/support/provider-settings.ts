/** Settings of a Twilio SMS provider that start the service (no request is made with them). */
export const twilioSmsSettings = {
  SMS_PROVIDER: 'twilio',
  TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
  TWILIO_AUTH_TOKEN: 'test-token',
  PUBLIC_BASE_URL: 'https://otp.example.com',
};
