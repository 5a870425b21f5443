/**
 * vitest's global setup: builds dist/ from the sources before any test runs, since the CLI and
 * e2e tests run dist/cli/main.js as a user would, and a stale build would test old code.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function build(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}
