import type { FastifyReply } from 'fastify';
import { splitNumberInput } from '../domain/phone.js';
import { sendError } from './envelope.js';

/**
 * The country code and local number of a create's or lookup's body (contract 3.1: `countryCode` may be left out
 * when `phoneNumber` is a whole E.164 number); null once an error has been sent.
 */
export function numberOf(
  body: { readonly countryCode?: string; readonly phoneNumber: string },
  reply: FastifyReply,
): { readonly countryCode: string; readonly phoneNumber: string } | null {
  const input = splitNumberInput(body.countryCode, body.phoneNumber);
  switch (input.kind) {
    case 'split':
      return { countryCode: input.countryCode, phoneNumber: input.phoneNumber };
    case 'no-country-code':
      sendError(reply, 'VALIDATION_ERROR', {
        details: [{ field: 'countryCode', issue: 'is required unless phoneNumber is a whole E.164 number (+ and digits)' }],
      });
      return null;
    case 'unreadable':
      sendError(reply, 'INVALID_PHONE_NUMBER', {
        details: [{ field: 'phoneNumber', issue: 'is not an E.164 number: no country calling code starts it' }],
      });
      return null;
    case 'disagrees':
      sendError(reply, 'INVALID_PHONE_NUMBER', {
        details: [{ field: 'phoneNumber', issue: `is a number of country code ${input.callingCode}, not of countryCode ${input.countryCode}` }],
      });
      return null;
  }
}
