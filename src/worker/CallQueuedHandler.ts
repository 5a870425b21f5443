/**
 * What Laravel's CallQueuedHandler does around running a command, done for jobs Node runs:
 * the next link of a chain pushed when a job succeeds. Worker.ts keeps the loop and Laravel's
 * attempts, backoff and timeout rules; this file keeps the application's bookkeeping that
 * CallQueuedHandler keeps, so PHP and Node workers leave the same state behind.
 */
import { PhpArray, PhpObject, deref, toJS, unserialize, type PhpValue } from '../php/index.js';
import { buildPayload, type DecodedPayload, type Encrypter } from '../laravel/index.js';
import type { RedisQueue } from '../redis/index.js';
import { SHOULD_BE_ENCRYPTED, declaredForEnvelope } from '../shapes/command.js';
import type { WorkerDependencies, WorkerEvent } from './Worker.js';
import type { WorkerOptions } from './WorkerOptions.js';

export class CallQueuedHandler {
  /** Classes whose PHP-only methods the log has named already. */
  private readonly saidNotRun = new Set<string>();

  constructor(
    private readonly queue: RedisQueue,
    private readonly options: WorkerOptions,
    private readonly deps: WorkerDependencies,
    private readonly log: (event: WorkerEvent) => void,
  ) {}

  /**
   * When a chained job succeeds, the next one is pushed the way Laravel's Queueable does it:
   * the rest of the chain goes with it, and its connection and queue default to the chain's,
   * then to the connection's own queue (the RedisQueue's default).
   */
  async dispatchNextInChain(payload: DecodedPayload, command: PhpValue | undefined): Promise<void> {
    const current = command === undefined ? undefined : deref(command);
    if (!(current instanceof PhpObject)) return;
    const chained = deref(current.get('chained') ?? null);
    if (!(chained instanceof PhpArray) || chained.size === 0) return;
    const [first, ...rest] = chained.values.map((entry) => deref(entry));
    const next = deref(unserialize(first as string | Uint8Array));
    if (!(next instanceof PhpObject)) return;
    const chainQueue = current.get('chainQueue') ?? null;
    const chainConnection = current.get('chainConnection') ?? null;
    setPublic(next, 'chained', PhpArray.list(rest));
    setPublic(next, 'connection', deref(next.get('connection') ?? null) || chainConnection);
    setPublic(next, 'queue', deref(next.get('queue') ?? null) || chainQueue);
    setPublic(next, 'chainConnection', chainConnection);
    setPublic(next, 'chainQueue', chainQueue);
    setPublic(next, 'chainCatchCallbacks', current.get('chainCatchCallbacks') ?? null);
    // This worker can push only to its own connection; the next job is never sent elsewhere by
    // mistake: the error fails (or releases) this job with the reason instead.
    const connection = deref(next.get('connection') ?? null);
    if (connection && connection !== this.options.connectionName) {
      throw new Error(`the next job in the chain goes to connection ${JSON.stringify(connection)}, and this worker serves only ${JSON.stringify(this.options.connectionName)}`);
    }
    const queue = deref(next.get('queue') ?? null);
    const own = (prop: string) => {
      const value = next.get(prop);
      return value === undefined ? null : (toJS(value) as never);
    };
    const delay = toJS(next.get('delay') ?? null);
    const shaped = this.shapedLink(next);
    const built = buildPayload(next, {
      profile: payload.profile,
      ...(shaped?.envelope ?? {
        maxTries: own('tries'),
        timeout: own('timeout'),
        backoff: own('backoff'),
        maxExceptions: own('maxExceptions'),
        failOnTimeout: own('failOnTimeout') ?? false,
      }),
      ...(shaped?.encrypter ? { encrypter: shaped.encrypter } : {}),
    });
    const target = typeof queue === 'string' && queue ? queue : this.queue.defaultQueue;
    if (typeof delay === 'number' && delay > 0) await this.queue.laterRaw(delay, built.raw, target);
    else await this.queue.pushRaw(built.raw, target);
  }

  /**
   * What the class's shape says of a chain's next link: its declared tries, backoff and the
   * like for the envelope, and its encryption (ShouldBeEncrypted: never pushed in clear text,
   * so a worker without the APP_KEY fails the finished job instead). A method whose result
   * Laravel would write (backoff(), retryUntil()) is said once per class.
   */
  private shapedLink(next: PhpObject): { envelope: ReturnType<typeof declaredForEnvelope>['envelope']; encrypter?: Encrypter } | undefined {
    const shapes = this.deps.shapes;
    const shape = shapes && Object.hasOwn(shapes.classes, next.className) ? shapes.classes[next.className] : undefined;
    if (!shape) return undefined;
    const declared = declaredForEnvelope(shape, next);
    if (declared.notRun.length > 0 && !this.saidNotRun.has(shape.name)) {
      this.saidNotRun.add(shape.name);
      this.log({ event: 'warning', reason: `${shape.name} defines ${declared.notRun.join(' and ')}, PHP that Node cannot run: the next link of a chain is pushed without ${declared.notRun.length > 1 ? 'their results' : 'its result'}` });
    }
    if (!shape.interfaces.includes(SHOULD_BE_ENCRYPTED)) return { envelope: declared.envelope };
    if (!this.deps.encrypter) throw new Error(`the next job in the chain, ${shape.name}, is ShouldBeEncrypted and this worker has no APP_KEY to encrypt it with`);
    return { envelope: declared.envelope, encrypter: this.deps.encrypter };
  }
}

/** Sets a property by its plain name, in place when the object has it, publicly otherwise. */
function setPublic(object: PhpObject, name: string, value: PhpValue): void {
  const { keys } = object.props;
  const at = keys.findIndex((key) => key === name || (typeof key === 'string' && key.endsWith(`\0${name}`)));
  if (at >= 0) object.props.values[at] = value;
  else object.props.set(name, value);
}
