import { createHash } from 'node:crypto';
import type { Clock, Random } from '../domain/ports.js';
import { hashPassword, passwordMatches, passwordProblem, unmatchableHash } from './password.js';
import { sessionAlive, type SessionPolicy } from './session-policy.js';

/** An operator as the CLI and the console list them: never a hash. */
export interface OperatorView {
  readonly id: string;
  readonly email: string;
  readonly createdAt: string;
  readonly disabledAt: string | null;
  readonly hasPassword: boolean;
  readonly passkeys: number;
}

/** An operator's row. */
export interface OperatorRecord {
  readonly id: string;
  readonly email: string;
  readonly passwordHash: string | null;
  readonly createdAt: Date;
  readonly disabledAt: Date | null;
}

export interface SessionRecord {
  readonly operatorId: string;
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
}

/** Where operators, their one-time links and their sessions are kept (port; src/store/operator-store.ts). */
export interface OperatorStore {
  /** Adds an operator with its first link; false when the email is taken. */
  create(operator: { id: string; email: string; createdAt: Date }, link: { tokenHash: string; expiresAt: Date }): Promise<boolean>;
  list(): Promise<OperatorView[]>;
  byEmail(email: string): Promise<OperatorRecord | null>;
  byId(id: string): Promise<OperatorRecord | null>;
  /** Disables an operator and deletes their sessions, in one transaction; false when there is none. */
  disable(id: string, now: Date): Promise<boolean>;
  /** Adds a one-time link for an existing, enabled operator; false when there is none. */
  addLink(operatorId: string, link: { tokenHash: string; expiresAt: Date }): Promise<boolean>;
  /** Marks a link used, if unused and unexpired at `now`; its operator's id, or null. */
  useLink(tokenHash: string, now: Date): Promise<string | null>;
  /** Sets a new password and ends every session of the operator but the one that asked ('' keeps none), in one transaction. */
  changePassword(operatorId: string, hash: string, keepSessionIdHash: string): Promise<void>;
  createSession(idHash: string, operatorId: string, now: Date): Promise<void>;
  findSession(idHash: string): Promise<SessionRecord | null>;
  touchSession(idHash: string, now: Date): Promise<void>;
  deleteSession(idHash: string): Promise<void>;
}

/** A signed-in operator. */
export interface SignedIn {
  readonly sessionId: string;
  readonly operator: OperatorRecord;
}

/** How long a one-time link can be used: a day, enough to get from the terminal to a browser. */
export const linkLifetimeMs = 24 * 3_600_000;

/** The SHA-256 of a secret, hex: what is stored of links' tokens and session ids. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** An email as operators are found by: trimmed, lower case. */
export function normalEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return /^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email) ? email : null;
}

/** Operators' accounts, one-time links, password sign-in and sessions (contract 16). */
export class OperatorService {
  constructor(
    private readonly store: OperatorStore,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly policy: SessionPolicy,
  ) {}

  /** A new operator and the token of their one-time link (shown once). */
  async create(rawEmail: string): Promise<{ operator: OperatorView; token: string; expiresAt: string } | string> {
    const email = normalEmail(rawEmail);
    if (!email) return `--email must be an email address, not "${rawEmail}"`;
    const now = this.clock.now();
    const token = this.random.bytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + linkLifetimeMs);
    const id = this.random.uuid();
    if (!(await this.store.create({ id, email, createdAt: now }, { tokenHash: secretHash(token), expiresAt }))) {
      return `an operator ${email} exists already`;
    }
    const operator: OperatorView = { id, email, createdAt: now.toISOString(), disabledAt: null, hasPassword: false, passkeys: 0 };
    return { operator, token, expiresAt: expiresAt.toISOString() };
  }

  list(): Promise<OperatorView[]> {
    return this.store.list();
  }

  /**
   * A new one-time link for an operator (a lost password): their earlier unused links stop working; the old
   * password and sessions work until the link is used, which ends them.
   */
  async newLink(id: string): Promise<{ operator: OperatorView; token: string; expiresAt: string } | null> {
    const token = this.random.bytes(32).toString('base64url');
    const expiresAt = new Date(this.clock.now().getTime() + linkLifetimeMs);
    if (!(await this.store.addLink(id, { tokenHash: secretHash(token), expiresAt }))) return null;
    const operator = (await this.store.list()).find((o) => o.id === id);
    return operator ? { operator, token, expiresAt: expiresAt.toISOString() } : null;
  }

  /** Disables an operator: their sessions end at once. */
  disable(id: string): Promise<boolean> {
    return this.store.disable(id, this.clock.now());
  }

  /** Uses a one-time link to set the password, and signs the operator in. */
  async setUp(token: string, password: string): Promise<SignedIn | string> {
    const problem = passwordProblem(password);
    if (problem) return problem;
    const now = this.clock.now();
    const operatorId = await this.store.useLink(secretHash(token), now);
    const operator = operatorId === null ? null : await this.store.byId(operatorId);
    if (!operator || operator.disabledAt) return 'this link is unknown, used or expired: ask for a new one (otp-service operators create)';
    // A link is a reset: whoever held a session before (a lost laptop, an attacker with the old password) is
    // signed out, every session ending with the new password; the one that follows is the link user's.
    await this.store.changePassword(operator.id, await hashPassword(password, this.random.bytes(16)), '');
    return this.startSession(operator);
  }

  /** Password sign-in; null when the email or password is wrong or the operator is disabled (the caller counts failures). */
  async signIn(rawEmail: string, password: string): Promise<SignedIn | null> {
    const email = normalEmail(rawEmail);
    const operator = email === null ? null : await this.store.byEmail(email);
    // The hash is checked whoever asks, so that the answer takes as long for an unknown email.
    const matches = await passwordMatches(password, operator?.passwordHash ?? unmatchableHash);
    if (!operator || !matches || operator.disabledAt) return null;
    return this.startSession(operator);
  }

  /**
   * An operator's own new password, from a session of theirs: only with the current one (checked as sign-in checks
   * it); their other sessions end, as a copied cookie or a forgotten browser should.
   */
  async changePassword(operator: OperatorRecord, sessionId: string, current: string, next: string): Promise<'changed' | 'wrong-password' | string> {
    if (!(await passwordMatches(current, operator.passwordHash ?? unmatchableHash))) return 'wrong-password';
    const problem = passwordProblem(next);
    if (problem) return problem;
    await this.store.changePassword(operator.id, await hashPassword(next, this.random.bytes(16)), secretHash(sessionId));
    return 'changed';
  }

  /** An operator by id (a passkey names its operator). */
  byId(id: string): Promise<OperatorRecord | null> {
    return this.store.byId(id);
  }

  /** Starts a session for an operator who proved who they are (password or passkey). */
  async startSession(operator: OperatorRecord): Promise<SignedIn> {
    const sessionId = this.random.bytes(32).toString('base64url');
    await this.store.createSession(secretHash(sessionId), operator.id, this.clock.now());
    return { sessionId, operator };
  }

  /** The operator of a live session (and it is kept alive); null when it is unknown, ended or its operator disabled. */
  async session(sessionId: string): Promise<OperatorRecord | null> {
    const idHash = secretHash(sessionId);
    const session = await this.store.findSession(idHash);
    const now = this.clock.now();
    if (!session) return null;
    if (!sessionAlive(session, now, this.policy)) {
      await this.store.deleteSession(idHash);
      return null;
    }
    const operator = await this.store.byId(session.operatorId);
    if (!operator || operator.disabledAt) return null;
    await this.store.touchSession(idHash, now);
    return operator;
  }

  /** Ends a session on the server: its cookie, wherever a copy of it is, signs nobody in any more. */
  signOut(sessionId: string): Promise<void> {
    return this.store.deleteSession(secretHash(sessionId));
  }
}
