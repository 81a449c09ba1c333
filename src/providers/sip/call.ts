import type { SendResult } from '../../channels/provider-port.js';
import { answerChallenge, pickChallenge, type DigestCredentials } from './digest.js';
import { addressUri, cseqOf, firstHeader, headerValues, topBranch, writeRequest, type OutgoingRequest, type SipResponse } from './message.js';
import { ackFailure, cancel, inDialog, invite, sdpOffer, type AnsweredDialog, type CallIdentity, type LocalEnd } from './requests.js';
import { finalFailure } from './status.js';

/** RFC 3261 timers T1 and T2: the first UDP retransmission interval and the cap of a non-INVITE's. */
const T1 = 500;
const T2 = 4_000;

/** What one call needs from the provider. */
export interface CallDeps {
  readonly send: (data: Buffer) => void;
  /** False over UDP: this call retransmits its requests itself. */
  readonly reliable: boolean;
  readonly local: LocalEnd;
  readonly identity: CallIdentity;
  readonly credentials: DigestCredentials | null;
  /** CALL_RING_SECONDS in ms: the longest the call may go without ringing before it is given up. */
  readonly ringMs: number;
  /** How long after the ring time a call still answers late responses (CANCEL a late 1xx, BYE a late 2xx). */
  readonly lingerMs: number;
  /** Routes responses whose top Via carries `branch` to `handler`, until `forget`. */
  readonly route: (branch: string, handler: (response: SipResponse) => void) => void;
  readonly forget: (branch: string) => void;
  readonly newBranch: () => string;
  /** A random number for the SDP session id. */
  readonly sessionId: number;
  /** A voice call (contract 13): answered and played to, not dropped at the first ring; absent: a dropped call. */
  readonly media?: CallMedia;
}

/** What a voice call plays once answered. */
export interface CallMedia {
  /** The local RTP port the SDP offer names. */
  readonly rtpPort: number;
  /** Plays the code to where the answer's SDP says; resolves when played (or `signal` stopped it). */
  readonly play: (answerSdp: string, signal: AbortSignal) => Promise<void>;
  /** The longest playing may take: the call's own bound grows by it. */
  readonly maxPlayMs: number;
}

/** A call placed: its result for the send, and when its dialog is over (CANCEL/487/ACK or ACK/BYE done). */
export interface PlacedCall {
  readonly outcome: Promise<SendResult>;
  readonly done: Promise<void>;
  /** Ends it now: timers cleared, responses no longer routed (at stop, after `done` or the stop's grace). */
  finish(): void;
  /** The callee hung up (its BYE, answered by the provider): playing stops, and no BYE of ours is needed. */
  hungUp(): void;
}

/**
 * The challenges of a 401 (WWW-Authenticate) or 407 (Proxy-Authenticate), one per header line: a challenge's
 * own parameters are comma-separated, so the lines are not split as other headers' lists are.
 */
function challenges(response: SipResponse): readonly string[] {
  return response.headers.get(response.status === 407 ? 'proxy-authenticate' : 'www-authenticate') ?? [];
}

/** A value settled once; later settles are ignored. */
class Once<T> {
  settled = false;
  readonly promise: Promise<T>;
  private resolve: (value: T) => void = () => undefined;
  constructor() {
    this.promise = new Promise<T>((resolve) => (this.resolve = resolve));
  }
  settle(value: T): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(value);
  }
}

/**
 * One dropped call (CONTRACT.md section 8), the INVITE client transaction and what follows it: ringing (180/183)
 * cancels the call and counts as delivered; an answer is ACKed and hung up at once (BYE) and counts as delivered;
 * a final failure before ringing is mapped by its status; a challenge (401/407) is answered once; no ringing
 * within the ring time, or the signal, gives up with a transient result (and a CANCEL once a 1xx allows one,
 * RFC 3261 section 9.1). Every wait is bounded by timers this object owns.
 */
export function placeCall(deps: CallDeps, signal: AbortSignal): PlacedCall {
  const { identity, local } = deps;
  const outcome = new Once<SendResult>();
  const done = new Once<void>();
  const timers = new Set<NodeJS.Timeout>();
  const branches = new Set<string>();
  let finished = false;

  let inviteBranch = deps.newBranch();
  let inviteCseq = 1;
  let authorization: readonly [string, string] | null = null;
  let provisional = false;
  let inviteFinal = false;
  let cancelSent = false;
  let dialog: AnsweredDialog | null = null;
  let ack: Buffer | null = null;
  let byeBranch: string | null = null;
  let byeCseq = 0;
  let byeAnswered = false;
  let byeChallenged = false;
  const media = deps.media ?? null;
  /** A voice call's phone rang (180/183): not answered by the ring time, it is undelivered, not a trunk fault. */
  let rang = false;
  let remoteHungUp = false;
  const playing = new AbortController();
  const sdp = sdpOffer(local, deps.sessionId, media?.rtpPort);

  const later = (ms: number, fn: () => void, unref = false): NodeJS.Timeout => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    if (unref) timer.unref();
    timers.add(timer);
    return timer;
  };
  const stopTimer = (timer: NodeJS.Timeout | null): void => {
    if (timer) {
      clearTimeout(timer);
      timers.delete(timer);
    }
  };

  /** Sends a request and, over UDP, retransmits it (Timer A for an INVITE, E for others) until the returned stop. */
  const sendRequest = (request: OutgoingRequest, retransmit: 'invite' | 'non-invite'): (() => void) => {
    const data = writeRequest(request);
    deps.send(data);
    if (deps.reliable) return () => undefined;
    let timer: NodeJS.Timeout | null = null;
    const schedule = (interval: number): void => {
      timer = later(interval, () => {
        if (finished) return;
        deps.send(data);
        schedule(retransmit === 'invite' ? interval * 2 : Math.min(interval * 2, T2));
      });
    };
    schedule(T1);
    return () => stopTimer(timer);
  };

  let stopInvite: () => void = () => undefined;
  let stopCancel: () => void = () => undefined;
  let stopBye: () => void = () => undefined;

  let ringTimer: NodeJS.Timeout | null = null;
  const checkDone = (): void => {
    if (inviteFinal && (dialog === null || byeAnswered)) {
      stopTimer(ringTimer);
      done.settle();
      // Over UDP a lost ACK shows up as a retransmitted final answer; keep answering it a while.
      if (deps.reliable) finish();
      else later(deps.lingerMs, finish, true);
    }
  };

  const sendInvite = (): void => {
    branches.add(inviteBranch);
    deps.route(inviteBranch, onResponse);
    stopInvite = sendRequest(invite(identity, local, inviteBranch, inviteCseq, sdp, authorization), 'invite');
  };

  const sendCancel = (): void => {
    cancelSent = true;
    stopCancel = sendRequest(cancel(identity, local, inviteBranch, inviteCseq), 'non-invite');
  };

  const sendBye = (): void => {
    if (!dialog) return;
    if (byeBranch) deps.forget(byeBranch);
    byeBranch = deps.newBranch();
    byeCseq = byeCseq === 0 ? inviteCseq + 1 : byeCseq + 1;
    branches.add(byeBranch);
    deps.route(byeBranch, onResponse);
    stopBye();
    stopBye = sendRequest(inDialog('BYE', identity, dialog, local, byeBranch, byeCseq, byeChallenged ? authorization : null), 'non-invite');
  };

  const giveUp = (reason: string): void => {
    if (outcome.settled || finished) return;
    stopInvite();
    outcome.settle({ kind: media !== null && rang ? 'permanent' : 'transient', reason });
    if (provisional && !cancelSent) sendCancel();
    // Nothing answered at all: nothing to wait for, though a late answer is still cancelled or hung up.
    if (!provisional) done.settle();
  };

  const onChallenge = (response: SipResponse): boolean => {
    const proxy = response.status === 407;
    const credentials = deps.credentials;
    if (credentials === null) {
      outcome.settle({ kind: 'permanent', reason: `trunk asks for digest authentication (${response.status}) and SIP_USERNAME / SIP_PASSWORD are not set` });
      return false;
    }
    if (authorization !== null) {
      outcome.settle({ kind: 'permanent', reason: `credentials refused: trunk answered ${response.status} again to the authenticated INVITE` });
      return false;
    }
    const challenge = pickChallenge(challenges(response));
    if (challenge === null) {
      outcome.settle({ kind: 'permanent', reason: `trunk asks (${response.status}) for an authentication other than digest MD5/SHA-256 with qop=auth` });
      return false;
    }
    authorization = [proxy ? 'Proxy-Authorization' : 'Authorization', answerChallenge(challenge, credentials, 'INVITE', identity.requestUri)];
    inviteBranch = deps.newBranch();
    inviteCseq += 1;
    inviteFinal = false;
    provisional = false;
    sendInvite();
    return true;
  };

  const onAnswered = (response: SipResponse): void => {
    if (dialog === null) {
      const contact = firstHeader(response, 'contact');
      dialog = {
        to: firstHeader(response, 'to') ?? identity.to,
        remoteTarget: contact === null ? identity.requestUri : addressUri(contact),
        routes: headerValues(response, 'record-route').reverse(),
      };
      inviteFinal = true;
      const givenUp = outcome.settled;
      outcome.settle({ kind: 'accepted', messageId: identity.callId, delivered: true });
      // The ACK of a 2xx is its own transaction (RFC 3261 section 13.2.2.4), sent again for each retransmitted 2xx.
      ack = writeRequest(inDialog('ACK', identity, dialog, local, deps.newBranch(), inviteCseq, authorization));
      deps.send(ack);
      stopCancel();
      if (media === null || givenUp) sendBye();
      else {
        // A voice call: the code is played, then the call is ended (unless the callee hung up first).
        void media
          .play(response.body, playing.signal)
          .catch(() => undefined)
          .finally(() => {
            if (!remoteHungUp && !finished) sendBye();
          });
      }
    } else if (ack) deps.send(ack);
  };

  const onInviteResponse = (response: SipResponse, branch: string, seq: number): void => {
    if (response.status < 200) {
      if (branch !== inviteBranch || inviteFinal) return;
      stopInvite();
      provisional = true;
      if (response.status === 180 || response.status === 183) {
        rang = true;
        // A dropped call is delivered, and done, at the first ring; a voice call waits for the answer.
        if (media === null) outcome.settle({ kind: 'accepted', messageId: identity.callId, delivered: true });
      }
      // Rang (a dropped call), or given up before this 1xx came: either way the call is cancelled now.
      if (outcome.settled && !cancelSent) sendCancel();
      return;
    }
    if (response.status < 300) {
      if (branch === inviteBranch) {
        stopInvite();
        onAnswered(response);
      }
      return;
    }
    // A failure answer is ACKed in its transaction; every copy, as a copy means the ACK was lost.
    deps.send(writeRequest(ackFailure(identity, local, branch, seq, firstHeader(response, 'to') ?? identity.to)));
    if (branch !== inviteBranch || inviteFinal) return;
    stopInvite();
    stopCancel();
    inviteFinal = true;
    if ((response.status === 401 || response.status === 407) && !outcome.settled && onChallenge(response)) return;
    outcome.settle(finalFailure(response.status, response.reason, firstHeader(response, 'retry-after')));
    checkDone();
  };

  const onByeResponse = (response: SipResponse, branch: string): void => {
    if (branch !== byeBranch || response.status < 200 || byeAnswered) return;
    stopBye();
    if ((response.status === 401 || response.status === 407) && !byeChallenged && deps.credentials) {
      const challenge = pickChallenge(challenges(response));
      if (challenge && dialog) {
        byeChallenged = true;
        authorization = [
          response.status === 407 ? 'Proxy-Authorization' : 'Authorization',
          answerChallenge(challenge, deps.credentials, 'BYE', dialog.remoteTarget),
        ];
        sendBye();
        return;
      }
    }
    byeAnswered = true;
    checkDone();
  };

  function onResponse(response: SipResponse): void {
    if (finished) return;
    const cseq = cseqOf(response);
    const branch = topBranch(response);
    if (cseq === null || branch === null) return;
    if (cseq.method === 'INVITE') onInviteResponse(response, branch, cseq.seq);
    else if (cseq.method === 'CANCEL') stopCancel();
    else if (cseq.method === 'BYE') onByeResponse(response, branch);
  }

  function finish(): void {
    if (finished) return;
    finished = true;
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    for (const branch of branches) deps.forget(branch);
    playing.abort();
    outcome.settle({ kind: 'transient', reason: 'the SIP provider stopped before the call rang' });
    done.settle();
    signal.removeEventListener('abort', onAbort);
  }

  const ringSeconds = Math.round(deps.ringMs / 100) / 10;
  const onAbort = (): void => giveUp('the send timed out before the call rang');
  if (signal.aborted) {
    outcome.settle({ kind: 'transient', reason: 'the send timed out before the call was placed' });
    finish();
  } else {
    signal.addEventListener('abort', onAbort, { once: true });
    sendInvite();
    ringTimer = later(deps.ringMs, () =>
      giveUp(
        media !== null && rang
          ? `not answered within ${ringSeconds} s (it rang)`
          : provisional
            ? `no ringing within ${ringSeconds} s (the trunk was trying)`
            : `no answer from the trunk within ${ringSeconds} s`,
      ),
    );
    // The bound of everything this call waits for.
    later(deps.ringMs + deps.lingerMs + (media?.maxPlayMs ?? 0), finish, true);
  }

  const hungUp = (): void => {
    if (dialog === null || byeAnswered) return;
    remoteHungUp = true;
    playing.abort();
    stopBye();
    byeAnswered = true;
    checkDone();
  };

  return { outcome: outcome.promise, done: done.promise, finish, hungUp };
}
