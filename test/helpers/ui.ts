/**
 * `lqb ui` as the browser tests start it: the built CLI on a free loopback port, ready once it
 * says where it serves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDashboard, type DashboardOptions } from '../../src/ui/index.js';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { root } from './php.js';

export interface RunningUi {
  child: ChildProcess;
  url: string;
  /** What it has written to standard error so far. */
  stderr: () => string;
}

/** Starts `lqb ui --port=0 ARGS…` with `env`; resolves with its address once it is serving, rejects if it exits first. */
export function startUi(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<RunningUi> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [join(root, 'dist/cli/main.js'), 'ui', '--port=0', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
      const url = /serving (http:\/\/\S+\/)/.exec(out)?.[1];
      if (url) resolve({ child, url, stderr: () => err });
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`lqb ui exited with ${code} before serving: ${err.trim()}`)));
  });
}

/** An action as the page posts it: the page's CSRF token in a header, confirmed. Its status and JSON answer. */
export async function postAction(url: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const html = await (await fetch(url)).text();
  const csrf = /name="lqb-csrf" content="([^"]+)"/.exec(html)![1]!;
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify({ confirm: true }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** createDashboard's handler on a loopback port of its own, in this process: its address (no trailing slash) and its close. */
export async function serveDashboard(options: DashboardOptions): Promise<{ base: string; close: () => Promise<void> }> {
  const dashboard = createDashboard(options);
  const server = createServer(dashboard.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await dashboard.close();
    },
  };
}

/** The dashboard's search for `term`, once it says how much it searched: each hit as [uuid, where it is]. */
export async function searchHits(page: Page, base: string, term: string): Promise<[string | null, string | null | undefined][]> {
  await page.goto(`${base}#/search/${term}`);
  await page.getByTestId('searched').waitFor();
  return page
    .getByTestId('search-hit')
    .evaluateAll((rows) =>
      rows.map((row) => [row.getAttribute('data-uuid'), row.children[1]?.textContent] as [string | null, string | null | undefined]),
    );
}
