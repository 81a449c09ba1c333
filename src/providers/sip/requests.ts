import { uriHost } from './settings.js';
import type { LocalAddress } from './transport.js';
import type { OutgoingRequest } from './message.js';

/** What stays the same across every request of one call: who, to whom, and under which Call-ID. */
export interface CallIdentity {
  readonly callId: string;
  readonly fromTag: string;
  /** sip:<number>@trunk-host[:port]: the Request-URI of the INVITE and its CANCEL. */
  readonly requestUri: string;
  /** The To header without a tag. */
  readonly to: string;
  /** The From header with our tag. */
  readonly from: string;
  /** The caller id as a name-addr, for P-Asserted-Identity. */
  readonly assertedIdentity: string;
}

/** Where we are, as the requests advertise it. */
export interface LocalEnd extends LocalAddress {
  readonly protocol: 'UDP' | 'TCP';
}

/** The dialog an answered INVITE created: the remote tag, target and route set (RFC 3261 section 12.1.2). */
export interface AnsweredDialog {
  /** The To header of the 2xx, with the callee's tag. */
  readonly to: string;
  readonly remoteTarget: string;
  readonly routes: readonly string[];
}

/** The SDP offer: PCMU, PCMA and telephone-event at our address, because many trunks refuse an INVITE without one. */
export function sdpOffer(local: LocalEnd, sessionId: number, rtpPort = 9): string {
  const family = local.address.includes(':') ? 'IP6' : 'IP4';
  // A dropped call sends and reads no media: it is dropped as soon as it rings. Port 9 (discard) says so to a
  // trunk that relays early media, while keeping the offer well-formed. A voice call names its RTP socket.
  return [
    'v=0',
    `o=- ${sessionId} ${sessionId} IN ${family} ${local.address}`,
    's=-',
    `c=IN ${family} ${local.address}`,
    't=0 0',
    `m=audio ${rtpPort} RTP/AVP 0 8 101`,
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:8 PCMA/8000',
    'a=rtpmap:101 telephone-event/8000',
    'a=fmtp:101 0-15',
    'a=sendrecv',
    '',
  ].join('\r\n');
}

function via(local: LocalEnd, branch: string): string {
  // rport (RFC 3581): the trunk answers to the address and port the request came from, which is right behind NAT.
  return `SIP/2.0/${local.protocol} ${uriHost(local.address)}:${local.port};${local.protocol === 'UDP' ? 'rport;' : ''}branch=${branch}`;
}

function contact(local: LocalEnd): string {
  return `<sip:${uriHost(local.address)}:${local.port}${local.protocol === 'TCP' ? ';transport=tcp' : ''}>`;
}

/** The user agent named in every request. */
const userAgent = 'otp-service';

/**
 * The headers every request of a call carries, in order: its Via (the transaction's branch), Max-Forwards, the
 * dialog's route set if any, From, To, Call-ID and CSeq.
 */
function callHeaders(
  call: CallIdentity,
  local: LocalEnd,
  branch: string,
  to: string,
  cseq: number,
  method: string,
  routes: readonly string[] = [],
): [string, string][] {
  return [
    ['Via', via(local, branch)],
    ['Max-Forwards', '70'],
    ...routes.map((route): [string, string] => ['Route', route]),
    ['From', call.from],
    ['To', to],
    ['Call-ID', call.callId],
    ['CSeq', `${cseq} ${method}`],
  ];
}

/** The INVITE (cseq 1, or 2 when it answers a challenge with `authorization`). */
export function invite(
  call: CallIdentity,
  local: LocalEnd,
  branch: string,
  cseq: number,
  sdp: string,
  authorization: readonly [string, string] | null,
): OutgoingRequest {
  return {
    method: 'INVITE',
    uri: call.requestUri,
    headers: [
      ...callHeaders(call, local, branch, call.to, cseq, 'INVITE'),
      ['Contact', contact(local)],
      ['P-Asserted-Identity', call.assertedIdentity],
      ['Allow', 'INVITE, ACK, CANCEL, BYE, OPTIONS'],
      ['User-Agent', userAgent],
      ...(authorization ? [authorization] : []),
    ],
    body: { type: 'application/sdp', text: sdp },
  };
}

/** The CANCEL of an INVITE: its Request-URI, top Via, From, To, Call-ID and CSeq number (RFC 3261 section 9.1). */
export function cancel(call: CallIdentity, local: LocalEnd, branch: string, cseq: number): OutgoingRequest {
  return {
    method: 'CANCEL',
    uri: call.requestUri,
    headers: [...callHeaders(call, local, branch, call.to, cseq, 'CANCEL'), ['User-Agent', userAgent]],
  };
}

/** The ACK of a failure answer: part of the INVITE's transaction, so its branch (RFC 3261 section 17.1.1.3). */
export function ackFailure(call: CallIdentity, local: LocalEnd, branch: string, cseq: number, answeredTo: string): OutgoingRequest {
  return {
    method: 'ACK',
    uri: call.requestUri,
    headers: callHeaders(call, local, branch, answeredTo, cseq, 'ACK'),
  };
}

/** A request inside the dialog an answer created (the ACK of a 2xx, the BYE): a new branch, the dialog's route. */
export function inDialog(
  method: 'ACK' | 'BYE',
  call: CallIdentity,
  dialog: AnsweredDialog,
  local: LocalEnd,
  branch: string,
  cseq: number,
  authorization: readonly [string, string] | null,
): OutgoingRequest {
  return {
    method,
    uri: dialog.remoteTarget,
    headers: [
      ...callHeaders(call, local, branch, dialog.to, cseq, method, dialog.routes),
      ['User-Agent', userAgent],
      ...(authorization ? [authorization] : []),
    ],
  };
}
