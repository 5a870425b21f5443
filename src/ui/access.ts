/**
 * Who may look, and who may change anything. A dashboard with no credential answers only on the
 * loopback; with a token (`Authorization: Bearer`, or the cookie a `?token=` visit sets) or basic
 * auth, anyone who has it. Every action is a POST carrying the page's CSRF token in a header (a
 * form or an image from another site cannot add a header) and a JSON body, from no other origin.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { keepSecret } from '../connect/redact.js';

export interface AccessOptions {
  /** A token a visitor gives once as `?token=` (kept as a cookie), or as `Authorization: Bearer TOKEN`. */
  token?: string;
  /** Basic auth, as `user:password` or its parts. */
  basicAuth?: string | { user: string; password: string };
}

export const TOKEN_COOKIE = 'lqb_ui_token';

export type Verdict = { allowed: true } | { allowed: false; status: 401 | 403; reason: string; challenge?: string };

export class Access {
  readonly csrf = randomBytes(24).toString('base64url');
  readonly #token: string | undefined;
  readonly #basic: string | undefined;

  constructor(options: AccessOptions) {
    this.#token = options.token || undefined;
    const basic =
      typeof options.basicAuth === 'string'
        ? options.basicAuth
        : options.basicAuth && `${options.basicAuth.user}:${options.basicAuth.password}`;
    this.#basic = basic || undefined;
    if (basic !== undefined && !basic.includes(':')) throw new Error('basic auth must be given as user:password');
    keepSecret(this.#token);
    keepSecret(this.#basic?.slice(this.#basic.indexOf(':') + 1));
  }

  /** Whether any credential guards the dashboard (binding beyond the loopback needs one). */
  get guarded(): boolean {
    return this.#token !== undefined || this.#basic !== undefined;
  }

  /** Whether this request may look at the dashboard at all. */
  check(req: IncomingMessage, queryToken: string | null): Verdict {
    if (!this.guarded) {
      if (!isLoopback(req.socket.localAddress))
        return { allowed: false, status: 403, reason: 'the dashboard has no token or basic auth, so it answers only on the loopback' };
      // A page of another site whose name was rebound to 127.0.0.1 would read it as its own: a
      // dashboard without a credential answers only to the loopback's own names.
      if (!isLoopbackHost(req.headers.host))
        return {
          allowed: false,
          status: 403,
          reason: 'the dashboard has no token or basic auth, so it answers only to localhost and loopback addresses',
        };
      return { allowed: true };
    }
    const auth = req.headers.authorization ?? '';
    if (this.#token !== undefined) {
      const given = auth.startsWith('Bearer ') ? auth.slice(7) : (queryToken ?? cookie(req, TOKEN_COOKIE));
      if (given !== null && given !== undefined && same(given, this.#token)) return { allowed: true };
    }
    if (this.#basic !== undefined && auth.startsWith('Basic ')) {
      const given = Buffer.from(auth.slice(6), 'base64').toString('utf8');
      if (same(given, this.#basic)) return { allowed: true };
    }
    return {
      allowed: false,
      status: 401,
      reason: 'a valid token or basic auth is required',
      ...(this.#basic !== undefined ? { challenge: 'Basic realm="lqb ui", charset="UTF-8"' } : {}),
    };
  }

  /** An action's request: the CSRF header, a JSON body, and no foreign Origin. */
  checkAction(req: IncomingMessage): Verdict {
    const header = req.headers['x-csrf-token'];
    if (typeof header !== 'string' || !same(header, this.csrf))
      return { allowed: false, status: 403, reason: 'the CSRF token is missing or wrong' };
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json'))
      return { allowed: false, status: 403, reason: 'an action takes a JSON body' };
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== 'null') {
      let host: string;
      try {
        host = new URL(origin).host;
      } catch {
        host = '';
      }
      if (host !== req.headers.host) return { allowed: false, status: 403, reason: `requests from ${origin} are refused` };
    }
    return { allowed: true };
  }
}

/** Constant-time comparison of two strings of any length (compared as hashes). */
function same(a: string, b: string): boolean {
  const hash = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(hash(a), hash(b));
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

/** 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1' || v4 === 'localhost';
}

/** A Host header naming the loopback: localhost, 127.x.y.z or [::1], with any port. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || isLoopback(name);
}
