// The dashboard page: Preact and htm (one ES module from the `htm` package), no build step.
// It polls the JSON API beside it; every action is a confirmed POST carrying the CSRF token.
import { html, render, useEffect, useState, useCallback } from './vendor/preact-htm.js';

const CSRF = document.querySelector('meta[name="lqb-csrf"]').content;
const READ_ONLY = document.querySelector('meta[name="lqb-read-only"]').content === 'true';
const POLL_MS = 2000;
const HORIZON_LISTS = ['recent', 'pending', 'completed', 'silenced', 'failed'];
const PAGE = 25;

async function getJson(path) {
  const response = await fetch(path, { credentials: 'same-origin' });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || `${response.status}`);
  return body;
}

async function postJson(path, body = {}) {
  const response = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': CSRF },
    body: JSON.stringify({ ...body, confirm: true }),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || `${response.status}`);
  return answer;
}

/** The hash route: #/, #/queues/NAME/STATE/OFFSET, #/failed/OFFSET, #/horizon/LIST/OFFSET, #/job/UUID[/QUEUE/STATE/OFFSET]. */
function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'queues' && parts[1])
    return { view: 'queue', queue: parts[1], state: parts[2] || 'ready', offset: Number(parts[3] || 0) };
  if (parts[0] === 'failed') return { view: 'failed', offset: Number(parts[1] || 0) };
  if (parts[0] === 'horizon' && parts[1] === 'tags')
    return { view: 'tags', tag: parts[2], failed: parts[3] === 'failed', offset: Number(parts[parts[3] === 'failed' ? 4 : 3] || 0) };
  if (parts[0] === 'horizon') return { view: 'horizon', list: parts[1] || 'recent', offset: Number(parts[2] || 0) };
  if (parts[0] === 'search') return { view: 'search', q: parts[1] || '' };
  if (parts[0] === 'workers') return { view: 'workers' };
  if (parts[0] === 'activity') return { view: 'activity' };
  if (parts[0] === 'completed') return { view: 'completed', offset: Number(parts[1] || 0) };
  if (parts[0] === 'batches' && parts[1] === 'page') return { view: 'batches', offset: Number(parts[2] || 0) };
  if (parts[0] === 'batches' && parts[1]) return { view: 'batch', id: parts[1] };
  if (parts[0] === 'batches') return { view: 'batches', offset: 0 };
  if (parts[0] === 'job' && parts[1])
    return { view: 'job', uuid: parts[1], queue: parts[2], state: parts[3], offset: parts[4] === undefined ? undefined : Number(parts[4]) };
  return { view: 'overview' };
}

function useRoute() {
  const [route, setRoute] = useState(parseRoute());
  useEffect(() => {
    const onChange = () => setRoute(parseRoute());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** Calls `load` now and every POLL_MS; returns [data, error, reload]. */
function usePoll(load, deps) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const reload = useCallback(
    () =>
      load().then(
        (d) => (setData(d), setError(null)),
        (e) => setError(e.message),
      ),
    deps,
  );
  useEffect(() => {
    setData(null);
    reload();
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [reload]);
  return [data, error, reload];
}

/** Seconds as a person says them: 45s, 12m, 3h. */
const duration = (seconds) =>
  seconds < 90 ? `${seconds}s` : seconds < 5400 ? `${Math.round(seconds / 60)}m` : `${Math.round(seconds / 3600)}h`;
const when = (seconds) => (seconds == null ? '' : new Date(seconds * 1000).toLocaleString());
const relative = (seconds) => {
  if (seconds == null) return '';
  const d = Math.round(seconds - Date.now() / 1000);
  const abs = Math.abs(d);
  const text = abs < 90 ? `${abs}s` : abs < 5400 ? `${Math.round(abs / 60)}m` : `${Math.round(abs / 3600)}h`;
  return d >= 0 ? `in ${text}` : `${text} ago`;
};

/** A confirmation before any action: the action runs only on "Yes". */
function Confirm({ ask, onDone }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const yes = async () => {
    setBusy(true);
    try {
      await ask.run();
      onDone(ask.done);
    } catch (e) {
      setError(e.message);
      setBusy(false);
    }
  };
  return html`<div class="dialog-backdrop" data-testid="confirm">
    <div class="dialog" role="dialog" aria-modal="true">
      <strong>${ask.title}</strong>
      <p>${ask.text}</p>
      ${error && html`<div class="notice error">${error}</div>`}
      <div class="actions">
        <button onClick=${() => onDone(null)} disabled=${busy}>Cancel</button>
        <button class="primary" data-testid="confirm-yes" onClick=${yes} disabled=${busy}>Yes, ${ask.verb}</button>
      </div>
    </div>
  </div>`;
}

/**
 * The last hour as a small SVG chart: per minute, the finished jobs where a record counts them
 * (Horizon's metrics, Node's record), else the jobs that left the queue as the samples saw it
 * shrink (done, failed, cancelled or cleared alike: never called finished); failures from
 * failed_jobs; the queue's depth as a line.
 */
function Chart({ history }) {
  const w = 180,
    h = 40,
    n = history.left.length;
  const counted = history.finished != null;
  const bars = counted ? history.finished : history.left;
  const depthMax = Math.max(1, ...history.depth.filter((d) => d != null));
  const barMax = Math.max(1, ...bars, ...history.failed);
  const x = (i) => (i * w) / n;
  const bw = w / n;
  const line = history.depth
    .map((d, i) => (d == null ? null : `${x(i) + bw / 2},${h - (d / depthMax) * (h - 2) - 1}`))
    .filter(Boolean)
    .join(' ');
  const total = bars.reduce((a, b) => a + b, 0);
  const failed = history.failed.reduce((a, b) => a + b, 0);
  const what = counted ? `${total} finished` : `≥${total} left the queue`;
  const who = counted
    ? `counted by ${history.finishedFrom.map((s) => (s === 'node' ? "Node's record" : "Horizon's metrics")).join(' and ')}`
    : 'done, failed, cancelled or cleared: no record counts finished jobs here';
  return html`<div>
    <svg class="chart" width=${w} height=${h} viewBox="0 0 ${w} ${h}" role="img" aria-label="last hour: ${what}, ${failed} failed">
      <rect x="0" y="0" width=${w} height=${h} fill="#fafbfc" />
      ${bars.map((v, i) => v > 0 && html`<rect x=${x(i)} y=${h - (v / barMax) * h} width=${bw} height=${(v / barMax) * h} fill=${counted ? '#6fcf97' : '#c8ccd2'} />`)}
      ${history.failed.map((v, i) => v > 0 && html`<rect x=${x(i)} y=${h - (v / barMax) * h} width=${bw / 2} height=${(v / barMax) * h} fill="#eb5757" />`)}
      ${line && html`<polyline points=${line} fill="none" stroke="#2f80ed" stroke-width="1.2" />`}
    </svg>
    <div class="legend">
      <span data-testid="finished" title=${who}>${what}</span><span class="failed">${failed} failed</span><span class="ready">depth</span>
    </div>
  </div>`;
}

function Overview({ setAsk }) {
  const [data, error, reload] = usePoll(() => getJson('api/overview'), []);
  if (error) return html`<div class="notice error">${error}</div>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const toggle = (q) =>
    setAsk({
      title: `${q.paused ? 'Resume' : 'Pause'} ${q.connection}:${q.name}?`,
      text: q.paused
        ? 'Workers (PHP and lqb work) take its jobs again.'
        : 'Workers that read the pause switch (Laravel 12.40+, lqb work) stop taking its jobs; they stay queued.',
      verb: q.paused ? 'resume' : 'pause',
      run: () => postJson(`api/queues/${encodeURIComponent(q.name)}/${q.paused ? 'resume' : 'pause'}`),
      done: reload,
    });
  const sum = data.summary;
  return html`<div class="stats" data-testid="summary">
      <div class="stat"><span class="label">Jobs per minute</span><strong data-testid="per-minute">${sum.perMinute ?? '?'}</strong></div>
      <div class="stat">
        <span class="label">Jobs past hour</span
        ><strong
          data-testid="past-hour"
          title=${sum.finishedPastHour == null ? 'no record counts finished jobs: run Horizon, or Node workers (their record is on by default)' : ''}
          >${sum.finishedPastHour ?? '?'}</strong
        >
      </div>
      <div class="stat">
        <span class="label">Status</span
        ><strong data-testid="status-summary"
          >${sum.nodeWorkers} Node worker${sum.nodeWorkers === 1 ? '' : 's'}${sum.horizon ? html` · Horizon ${sum.horizon}` : ''}</strong
        >
      </div>
      <div class="stat"><span class="label">Processes</span><strong data-testid="processes">${sum.processes}</strong></div>
      <div class="stat"><span class="label">Failed past 7 days</span><strong data-testid="failed-week">${sum.failedPastWeek}</strong></div>
      <div class="stat">
        <span class="label">Longest wait</span
        ><strong data-testid="longest-wait"
          >${data.longestWait ? html`${duration(data.longestWait.wait)} <span class="muted">${data.longestWait.queue}</span>` : '—'}</strong
        >
      </div>
    </div>
    <div class="card">
      <table data-testid="queues">
        <thead>
          <tr>
            <th>Queue</th>
            <th>Status</th>
            <th class="num">Ready</th>
            <th class="num">Delayed</th>
            <th class="num">Reserved</th>
            <th class="num">Failed</th>
            <th class="num" title="the age of its oldest ready job">Wait</th>
            <th>Last hour</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${
            data.queues.length === 0 &&
            html`<tr>
              <td colspan="9" class="muted">No queues found.</td>
            </tr>`
          }
          ${data.queues.map(
            (q) =>
              html`<tr data-testid=${`queue-${q.name}`}>
                <td>
                  <a href=${`#/queues/${encodeURIComponent(q.name)}/ready`}>${q.name}</a> <span class="muted mono">${q.connection}</span>
                </td>
                <td>
                  <span class=${`badge ${q.paused ? 'paused' : 'running'}`} data-testid="status">${q.paused ? 'paused' : 'running'}</span>
                </td>
                <td class="num ready" data-testid="ready"><a href=${`#/queues/${encodeURIComponent(q.name)}/ready`}>${q.ready}</a></td>
                <td class="num delayed" data-testid="delayed">
                  <a href=${`#/queues/${encodeURIComponent(q.name)}/delayed`}>${q.delayed}</a>
                </td>
                <td class="num reserved" data-testid="reserved">
                  <a href=${`#/queues/${encodeURIComponent(q.name)}/reserved`}>${q.reserved}</a>
                </td>
                <td class="num failed" data-testid="failed"><a href="#/failed">${q.failed}</a></td>
                <td
                  class="num"
                  data-testid="wait"
                  title=${q.wait === null ? "its oldest job's payload carries no push time (Laravel before 12.11, without Horizon)" : 'the age of its oldest ready job'}
                >
                  ${q.wait === null ? '?' : duration(q.wait)}
                </td>
                <td>
                  <${Chart} history=${q.history} />
                  ${q.horizon && html`<div class="legend" data-testid="horizon-metrics">Horizon: ${q.horizon.throughput} done${q.horizon.runtime != null ? html`, ${Math.round(q.horizon.runtime * 100) / 100} ms mean` : ''}</div>`}
                </td>
                <td>
                  ${!READ_ONLY && html`<button data-testid="pause-toggle" onClick=${() => toggle(q)}>${q.paused ? 'Resume' : 'Pause'}</button>`}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
      <p class="muted legend">
        The chart: finished jobs per minute where a record counts them (Horizon's metrics, Node's workers' own record), else the jobs that
        left the queue as this dashboard saw it shrink (done, failed, cancelled or cleared alike, and a lower bound: Laravel's queues keep
        no count of finished jobs); failures per minute from failed_jobs; the queue's depth.
      </p>
      ${
        data.horizon &&
        html`<p class="legend" data-testid="horizon-links">
          Horizon's records (<span class="mono">${data.horizon.prefix}</span>):
          ${HORIZON_LISTS.map((l) => html` <a href=${`#/horizon/${l}`}>${l}</a>`)} ·
          <a href="#/horizon/tags" data-testid="horizon-tags-link">monitored tags</a>
        </p>`
      }
    </div>`;
}

function Properties({ job }) {
  if (job.payloadHead !== undefined)
    return html`<details data-testid="payload-head">
      <summary class="mono">the payload is ${bytes(job.payloadBytes)}: too large to decode here</summary>
      <pre>${job.payloadHead}</pre>
      <${Download} job=${job} />
    </details>`;
  if (job.error)
    return html`<div class="notice error">cannot decode: ${job.error}</div>
      <${Download} job=${job} />`;
  if (job.encrypted && job.properties == null)
    return html`<span class="muted" data-testid="encrypted"
      >encrypted: shown only by a dashboard started with --show-encrypted and the app's key</span
    >`;
  if (job.propertiesCut !== undefined)
    return html`<details>
      <summary class="mono">properties too long to show whole (${bytes(job.payloadBytes)} payload)</summary>
      <pre data-testid="properties">${job.propertiesCut}</pre>
      <${Download} job=${job} />
    </details>`;
  return html`<details>
    <summary class="mono">${oneLine(job.properties)}</summary>
    <pre data-testid="properties">${JSON.stringify(job.properties, null, 2)}</pre>
  </details>`;
}

/** The link to the job's whole payload, as stored (the server names it: a queued job's place, a failed job's uuid). */
function Download({ job }) {
  return job.download
    ? html`<p><a data-testid="download" href=${job.download} download>Download the whole payload (${bytes(job.payloadBytes)})</a></p>`
    : null;
}

function bytes(n) {
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${n} bytes`;
}

/** The command in one line: its properties that are set, `name: value`, cut short. */
function oneLine(properties) {
  if (properties === null || typeof properties !== 'object') return JSON.stringify(properties);
  const text = Object.entries(properties)
    .filter(([key, value]) => key !== '@class' && value !== null && !(Array.isArray(value) && value.length === 0))
    .map(([key, value]) => `${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(', ');
  return text.length > 140 ? `${text.slice(0, 140)}…` : text || '(no properties)';
}

/** An exception: its first line, the trace folded under it, and the side its frames say failed the job. */
function Exception({ text, side, open = false }) {
  const [first, ...rest] = text.split('\n');
  return html`<details class="exception" data-testid="exception" open=${open}>
    <summary><strong>${first}</strong></summary>
    ${SIDES[side] && html`<p class="muted" data-testid="side-detail">Failed on <${SideBadge} side=${side} />: ${SIDES[side].why}</p>`}
    <pre class="exception">${rest.join('\n')}</pre>
  </details>`;
}

/** The sides a job's record can name (src/ui/side.ts), and how the page knows. */
const SIDES = {
  php: { label: 'PHP', why: "its trace's frames are PHP's, FILE(LINE)." },
  node: { label: 'Node', why: "its trace's frames are JavaScript's, FILE:LINE:COLUMN." },
};

/** Which side ran the job, only when its record says so (a failure's trace); nothing when no record does. */
function SideBadge({ side }) {
  if (!SIDES[side]) return null;
  return html`<span class=${`badge side ${side}`} data-testid="side" title=${`ran on the ${SIDES[side].label} side: ${SIDES[side].why}`}
    >${SIDES[side].label}</span
  >`;
}

function Pager({ total, offset, href }) {
  const last = Math.min(total, offset + PAGE);
  return html`<div class="pager" data-testid="pager">
    <span>${total === 0 ? 0 : offset + 1}–${last} of ${total}</span>
    ${offset > 0 && html`<a href=${href(Math.max(0, offset - PAGE))}>‹ previous</a>`}
    ${last < total && html`<a href=${href(offset + PAGE)} data-testid="next">next ›</a>`}
  </div>`;
}

function QueueView({ route, setAsk }) {
  const { queue, state, offset } = route;
  const path = `api/queues/${encodeURIComponent(queue)}/jobs?state=${state}&offset=${offset}&limit=${PAGE}`;
  const [data, error, reload] = usePoll(() => getJson(path), [path]);
  const href = (s, o = 0) => `#/queues/${encodeURIComponent(queue)}/${s}/${o}`;
  const cancel = (job) =>
    setAsk({
      title: `Cancel delayed job ${job.uuid}?`,
      text: `It is removed from ${queue}'s delayed jobs and never runs. This cannot be undone.`,
      verb: 'cancel it',
      run: () => postJson(`api/queues/${encodeURIComponent(queue)}/cancel`, { uuid: job.uuid }),
      done: reload,
    });
  return html`<div class="card">
    <h2>${queue}</h2>
    <div class="tabs">
      ${['ready', 'delayed', 'reserved'].map((s) => html`<a class=${s === state ? 'active' : ''} href=${href(s)} data-testid=${`tab-${s}`}>${s}</a>`)}
    </div>
    ${error && html`<div class="notice error">${error}</div>`}
    ${
      !data
        ? html`<p class="muted">Loading…</p>`
        : html` <table data-testid="jobs">
              <thead>
                <tr>
                  <th>Job</th>
                  <th>Attempts</th>
                  <th>${state === 'delayed' ? 'Available' : state === 'reserved' ? 'Reserved until' : 'Pushed'}</th>
                  <th>Command</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${
                  data.jobs.length === 0 &&
                  html`<tr>
                    <td colspan="5" class="muted">No ${state} jobs.</td>
                  </tr>`
                }
                ${data.jobs.map(
                  (job, i) =>
                    html`<tr data-testid="job" data-uuid=${job.uuid}>
                      <td>
                        <${JobLink} job=${job} place=${[queue, state, offset + i]} /><${SideBadge} side=${job.side} />
                        <div class="mono muted">${job.uuid}</div>
                        <${HorizonStatus} job=${job} />
                      </td>
                      <td class="num">${job.attempts ?? ''}${job.maxTries ? html` / ${job.maxTries}` : ''}</td>
                      <td class="nowrap" title=${when(job.until ?? job.pushedAt)}>${relative(job.until ?? job.pushedAt) || '—'}</td>
                      <td><${Properties} job=${job} /></td>
                      <td>
                        ${state === 'delayed' && !READ_ONLY && job.uuid && html`<button class="danger" data-testid="cancel" onClick=${() => cancel(job)}>Cancel</button>`}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
            <${Pager} total=${data.total} offset=${offset} href=${(o) => href(state, o)} />`
    }
  </div>`;
}

/** What Horizon's record says of a job: its status, and when it was reserved, completed or failed. */
function HorizonStatus({ job }) {
  const h = job.horizon;
  if (!h) return null;
  const at = h.failedAt ?? h.completedAt ?? h.reservedAt ?? h.createdAt;
  return html`<div class="muted" data-testid="horizon-status" title="Horizon's record of this job">
    Horizon: <span class=${`badge ${h.status}`}>${h.status}</span> ${at != null && html`<span title=${when(at)}>${relative(at)}</span>`}
  </div>`;
}

/** One of Horizon's lists (recent, pending, completed, failed), newest first, each job decoded. */
function HorizonJobsView({ route }) {
  const { list, offset } = route;
  const path = `api/horizon/${list}?offset=${offset}&limit=${PAGE}`;
  const [data, error] = usePoll(() => getJson(path), [path]);
  const href = (l, o = 0) => `#/horizon/${l}/${o}`;
  return html`<div class="card">
    <h2>Horizon's ${list} jobs ${data && html`<span class="muted">(${data.total})</span>`}</h2>
    <div class="tabs">
      ${HORIZON_LISTS.map((l) => html`<a class=${l === list ? 'active' : ''} href=${href(l)} data-testid=${`horizon-tab-${l}`}>${l}</a>`)}
    </div>
    ${error && html`<div class="notice error">${error}</div>`}
    ${
      !data
        ? html`<p class="muted">Loading…</p>`
        : html`<table data-testid="horizon-jobs">
              <thead>
                <tr>
                  <th>Job</th>
                  <th>Queue</th>
                  <th>Command</th>
                </tr>
              </thead>
              <tbody>
                ${
                  data.jobs.length === 0 &&
                  html`<tr>
                    <td colspan="3" class="muted">No ${list} jobs.</td>
                  </tr>`
                }
                ${data.jobs.map(
                  (job) =>
                    html`<tr data-testid="horizon-job" data-uuid=${job.uuid}>
                      <td>
                        <${JobLink} job=${job} /><${SideBadge} side=${job.side} />
                        <div class="mono muted">${job.uuid}</div>
                        <${HorizonStatus} job=${job} />
                      </td>
                      <td>${job.connection}:${job.queue}</td>
                      <td>${job.exception && html`<${Exception} text=${job.exception} side=${job.side} />`}<${Properties} job=${job} /></td>
                    </tr>`,
                )}
              </tbody>
            </table>
            <${Pager} total=${data.total} offset=${offset} href=${(o) => href(list, o)} />`
    }
  </div>`;
}

/** What Retry does to this job: Horizon's Retry when Horizon holds a failed record of it (as lqb retry does), else queue:retry. */
function retryText(job) {
  if (job.horizon?.status === 'failed')
    return `Horizon holds its failed record: it is retried as Horizon's Retry does, a new job on ${job.queue} in that record's retried_by, and its failed_jobs record deleted (as lqb retry).`;
  return `It is pushed back onto ${job.queue} with its attempts reset, and its failed record deleted (as queue:retry).`;
}

/** The failed list's filter: class, queue, exception text; applied as typed. */
function FailedFilter({ filter, setFilter }) {
  const field = (name, placeholder) =>
    html`<input
      data-testid=${`filter-${name}`}
      placeholder=${placeholder}
      value=${filter[name] || ''}
      onInput=${(e) => setFilter({ ...filter, [name]: e.target.value })}
    />`;
  return html`<div class="filters">${field('class', 'class')} ${field('queue', 'queue')} ${field('exception', 'exception text')}</div>`;
}

function FailedView({ route, setAsk }) {
  const [filter, setFilter] = useState({});
  const filterQuery = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
  const path = `api/failed?offset=${route.offset}&limit=${PAGE}${filterQuery ? `&${filterQuery}` : ''}`;
  const [data, error, reload] = usePoll(() => getJson(path), [path]);
  // Retry all / forget all: counted first, then confirmed with that count; acts on what was counted only.
  const actOnAll = async (verb) => {
    const counted = await getJson(`api/failed/matching${filterQuery ? `?${filterQuery}` : ''}`);
    const what = filterQuery
      ? `matching ${Object.entries(filter)
          .filter(([, v]) => v)
          .map(([k, v]) => `${k} “${v}”`)
          .join(', ')}`
      : '';
    setAsk({
      title: `${verb === 'retry' ? 'Retry' : 'Forget'} ${counted.count} failed job${counted.count === 1 ? '' : 's'}${what ? ` ${what}` : ''}?`,
      text: `Exactly the ${counted.count} counted now: a failure recorded after this count is left as it is. ${verb === 'retry' ? 'Each is retried as Retry does.' : 'Each failed record is deleted (as queue:forget).'}`,
      verb: `${verb} ${counted.count}`,
      run: () => postJson(`api/failed/${verb}-all`, { ...filter, upTo: counted.upTo, count: counted.count }),
      done: reload,
    });
  };
  const ask = (job, verb) =>
    setAsk({
      title: `${verb === 'retry' ? 'Retry' : 'Forget'} failed job ${job.uuid}?`,
      text: verb === 'retry' ? retryText(job) : 'Its failed record is deleted (as queue:forget).',
      verb,
      run: () => postJson(`api/failed/${encodeURIComponent(job.uuid)}/${verb}`),
      done: reload,
    });
  const flush = () =>
    setAsk({
      title: 'Flush every failed job?',
      text: 'Every record in failed_jobs is deleted (as queue:flush).',
      verb: 'flush',
      run: () => postJson('api/failed/flush'),
      done: reload,
    });
  return html`<div class="card">
    <h2>Failed jobs ${data && html`<span class="muted">(${data.total})</span>`}</h2>
    <${FailedFilter} filter=${filter} setFilter=${setFilter} />
    ${
      !READ_ONLY &&
      data &&
      data.total > 0 &&
      html`<p>
        <button data-testid="retry-all" onClick=${() => actOnAll('retry')}>Retry all ${filterQuery ? 'matching' : ''}</button>
        <button class="danger" data-testid="forget-all" onClick=${() => actOnAll('forget')}>
          Forget all ${filterQuery ? 'matching' : ''}
        </button>
        ${!filterQuery && html`<button class="danger" data-testid="flush" onClick=${flush}>Flush all</button>`}
      </p>`
    }
    ${error && html`<div class="notice error">${error}</div>`}
    ${
      !data
        ? html`<p class="muted">Loading…</p>`
        : html` <table data-testid="failed-jobs">
              <thead>
                <tr>
                  <th>Job</th>
                  <th>Queue</th>
                  <th>Failed at</th>
                  <th>Exception and command</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${
                  data.jobs.length === 0 &&
                  html`<tr>
                    <td colspan="5" class="muted">No failed jobs.</td>
                  </tr>`
                }
                ${data.jobs.map(
                  (job) =>
                    html`<tr data-testid="failed-job" data-uuid=${job.uuid}>
                      <td>
                        <${JobLink} job=${job} /><${SideBadge} side=${job.side} />
                        <div class="mono muted">${job.uuid}</div>
                        <${HorizonStatus} job=${job} />
                      </td>
                      <td>${job.connection}:${job.queue}</td>
                      <td class="nowrap">${job.failedAt} UTC</td>
                      <td><${Exception} text=${job.exception} side=${job.side} /><${Properties} job=${job} /></td>
                      <td>
                        ${!READ_ONLY && html`<button data-testid="retry" onClick=${() => ask(job, 'retry')}>Retry</button> <button class="danger" data-testid="forget" onClick=${() => ask(job, 'forget')}>Forget</button>`}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
            <${Pager} total=${data.total} offset=${route.offset} href=${(o) => `#/failed/${o}`} />`
    }
  </div>`;
}

/** A job's name, linking to its own page (with the place a queue's list saw it, so the page reads it from there). */
function JobLink({ job, place }) {
  if (!job.uuid) return html`<strong data-testid="job-name">${job.name}</strong>`;
  const tail = place ? `/${place.map((p) => encodeURIComponent(String(p))).join('/')}` : '';
  return html`<a href=${`#/job/${encodeURIComponent(job.uuid)}${tail}`} data-testid="job-link"
    ><strong data-testid="job-name">${job.name}</strong></a
  >`;
}

const FOUND_IN = { ready: 'ready', delayed: 'delayed', reserved: 'reserved', failed: 'failed_jobs', horizon: "Horizon's records" };

/** A job's own page: its envelope, command, tags, exception, side, Horizon's record and retries, and its payload as a download. */
function JobView({ route, setAsk }) {
  const { uuid, queue, state, offset } = route;
  const query = queue ? `?${new URLSearchParams({ queue, state, offset: String(offset) })}` : '';
  const path = `api/jobs/${encodeURIComponent(uuid)}${query}`;
  const [data, error, reload] = usePoll(() => getJson(path), [path]);
  if (error)
    return html`<div class="card">
      <h2 class="mono">${uuid}</h2>
      <div class="notice error" data-testid="job-error">${error}</div>
    </div>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const job = data.summary;
  const failedActions = data.foundIn === 'failed' && !READ_ONLY;
  const ask = (verb) =>
    setAsk({
      title: `${verb === 'retry' ? 'Retry' : 'Forget'} failed job ${uuid}?`,
      text:
        verb === 'retry'
          ? retryText({ ...job, queue: data.queue, horizon: data.horizon })
          : 'Its failed record is deleted (as queue:forget).',
      verb,
      run: () => postJson(`api/failed/${encodeURIComponent(uuid)}/${verb}`),
      done: reload,
    });
  const h = data.horizon;
  return html`<div class="card" data-testid="job-page">
    <h2><span data-testid="job-name">${job.name}</span><${SideBadge} side=${data.side} /></h2>
    <p class="mono muted">${uuid}</p>
    <p>
      ${'In '}<strong data-testid="found-in">${FOUND_IN[data.foundIn]}</strong
      >${data.queue && html` on <span class="mono">${data.connection}:${data.queue}</span>`}
      ${data.failedAt && html` · failed ${data.failedAt} UTC`}
      ${failedActions && html` <button data-testid="retry" onClick=${() => ask('retry')}>Retry</button> <button class="danger" data-testid="forget" onClick=${() => ask('forget')}>Forget</button>`}
    </p>
    <table class="fields" data-testid="envelope">
      <tbody>
        <tr>
          <th>Attempts</th>
          <td data-testid="attempts">${job.attempts ?? '—'}${job.maxTries ? ` of ${job.maxTries}` : ''}</td>
        </tr>
        <tr>
          <th>Pushed</th>
          <td>${job.pushedAt ? html`<span title=${when(job.pushedAt)}>${relative(job.pushedAt)}</span>` : '—'}</td>
        </tr>
        ${
          job.until != null &&
          html`<tr>
            <th>${data.foundIn === 'delayed' ? 'Available' : 'Reserved until'}</th>
            <td>${when(job.until)}</td>
          </tr>`
        }
        <tr>
          <th>Tags</th>
          <td data-testid="tags">${data.tags.length ? data.tags.map((t) => html`<span class="badge tag">${t}</span> `) : '—'}</td>
        </tr>
        ${Object.entries(data.envelope).map(
          ([key, value]) =>
            html`<tr data-testid=${`field-${key}`}>
              <th class="mono">${key}</th>
              <td class="mono">${typeof value === 'string' ? value : JSON.stringify(value)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <h3>Command</h3>
    <${Properties} job=${job} />
    ${data.download && html`<${Download} job=${{ ...job, download: data.download }} />`}
    ${
      data.exception &&
      html`<h3>Exception</h3>
        <${Exception} text=${data.exception} side=${data.side} open=${true} />`
    }
    ${
      h &&
      html`<h3>Horizon</h3>
        <p data-testid="horizon-record">
          Status
          <span class=${`badge ${h.status}`}>${h.status}</span>
          ${h.retryOf && html` · retries <a href=${`#/job/${encodeURIComponent(h.retryOf)}`} data-testid="retry-of">${h.retryOf}</a>`}
        </p>
        ${
          h.retriedBy.length > 0 &&
          html`<table data-testid="retries">
            <thead>
              <tr>
                <th>Retry</th>
                <th>Status</th>
                <th>Retried</th>
              </tr>
            </thead>
            <tbody>
              ${h.retriedBy.map(
                (r) =>
                  html`<tr>
                    <td><a class="mono" href=${`#/job/${encodeURIComponent(r.id)}`}>${r.id}</a></td>
                    <td><span class=${`badge ${r.status}`}>${r.status}</span></td>
                    <td>${when(r.retriedAt)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        }`
    }
  </div>`;
}

/** Search by uuid, class, tag or text in the command: a window at a time, "searched N of M", going on from the cursor. */
function SearchView({ route }) {
  const [text, setText] = useState(route.q);
  const [windows, setWindows] = useState([]);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const run = async (cursor) => {
    setBusy(true);
    try {
      const answer = await getJson(`api/search?q=${encodeURIComponent(route.q)}${cursor ? `&cursor=${cursor}` : ''}`);
      setWindows((before) => (cursor ? [...before, answer] : [answer]));
      setError(null);
    } catch (e) {
      setError(e.message);
    }
    setBusy(false);
  };
  useEffect(() => {
    setText(route.q);
    setWindows([]);
    if (route.q) run(null);
  }, [route.q]);
  const last = windows.at(-1);
  const hits = windows.flatMap((w) => w.hits);
  return html`<div class="card" data-testid="search">
    <h2>Search</h2>
    <form onSubmit=${(e) => (e.preventDefault(), (location.hash = `#/search/${encodeURIComponent(text.trim())}`))}>
      <input
        data-testid="search-q"
        class="wide"
        placeholder="a uuid, a class, a tag, text in the command"
        value=${text}
        onInput=${(e) => setText(e.target.value)}
      />
      <button class="primary" data-testid="search-go">Search</button>
    </form>
    ${error && html`<div class="notice error">${error}</div>`}
    ${last && html`<p class="muted" data-testid="searched">searched ${last.searched} of ${last.total} jobs${last.next ? '' : ': all of them'}</p>`}
    ${
      last &&
      html`<table data-testid="search-hits">
        <thead>
          <tr>
            <th>Job</th>
            <th>Where</th>
            <th>Command</th>
          </tr>
        </thead>
        <tbody>
          ${
            hits.length === 0 &&
            html`<tr>
              <td colspan="3" class="muted">Nothing found yet.</td>
            </tr>`
          }
          ${hits.map(
            (job) =>
              html`<tr data-testid="search-hit" data-uuid=${job.uuid}>
                <td>
                  <${JobLink} job=${job} place=${job.where === 'failed' ? undefined : [job.queue, job.where, job.offset]} /><${SideBadge}
                    side=${job.side}
                  />
                  <div class="mono muted">${job.uuid}</div>
                </td>
                <td>${job.where === 'failed' ? 'failed_jobs' : `${job.queue} · ${job.where}`}</td>
                <td><${Properties} job=${job} /></td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    ${last?.next && html`<button data-testid="search-more" disabled=${busy} onClick=${() => run(last.next)}>Search on</button>`}
  </div>`;
}

/** A batch's progress as a bar and its numbers. */
function Progress({ batch }) {
  return html`<span class="progress" title=${`${batch.processedJobs} of ${batch.totalJobs} processed, ${batch.failedJobs} failed`}
      ><span class="bar" style=${`width:${batch.progress}%`}></span></span
    ><span data-testid="progress">${batch.progress}%</span>`;
}

function batchStatus(batch) {
  if (batch.cancelledAt) return 'cancelled';
  if (batch.finishedAt) return batch.failedJobs > 0 ? 'finished with failures' : 'finished';
  return batch.failedJobs > 0 ? 'running with failures' : 'running';
}

/** job_batches, newest first. */
function BatchesListView({ route }) {
  const path = `api/batches?offset=${route.offset}&limit=${PAGE}`;
  const [data, error] = usePoll(() => getJson(path), [path]);
  return html`<div class="card">
    <h2>Batches ${data && html`<span class="muted">(${data.total})</span>`}</h2>
    ${error && html`<div class="notice error">${error}</div>`}
    ${
      !data
        ? html`<p class="muted">Loading…</p>`
        : html`<table data-testid="batches">
              <thead>
                <tr>
                  <th>Batch</th>
                  <th>Status</th>
                  <th>Progress</th>
                  <th class="num">Jobs</th>
                  <th class="num">Pending</th>
                  <th class="num">Failed</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                ${
                  data.batches.length === 0 &&
                  html`<tr>
                    <td colspan="7" class="muted">No batches.</td>
                  </tr>`
                }
                ${data.batches.map(
                  (b) =>
                    html`<tr data-testid="batch" data-id=${b.id}>
                      <td>
                        <a href=${`#/batches/${encodeURIComponent(b.id)}`}><strong>${b.name || '(no name)'}</strong></a>
                        <div class="mono muted">${b.id}</div>
                      </td>
                      <td data-testid="batch-status">${batchStatus(b)}</td>
                      <td><${Progress} batch=${b} /></td>
                      <td class="num">${b.totalJobs}</td>
                      <td class="num">${b.pendingJobs}</td>
                      <td class="num failed">${b.failedJobs}</td>
                      <td title=${when(b.createdAt)}>${relative(b.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
            <${Pager} total=${data.total} offset=${route.offset} href=${(o) => `#/batches/page/${o}`} />`
    }
  </div>`;
}

/** One batch: its numbers, its failed jobs, cancel and retry-failed (as queue:retry-batch). */
function BatchView({ route, setAsk }) {
  const path = `api/batches/${encodeURIComponent(route.id)}`;
  const [b, error, reload] = usePoll(() => getJson(path), [path]);
  if (error) return html`<div class="card"><div class="notice error">${error}</div></div>`;
  if (!b) return html`<p class="muted">Loading…</p>`;
  const act = (verb) =>
    setAsk({
      title: `${verb === 'cancel' ? 'Cancel' : 'Retry the failed jobs of'} batch ${b.name || b.id}?`,
      text:
        verb === 'cancel'
          ? "Its jobs not yet run are skipped by PHP's and Node's workers (Batch::cancel())."
          : `Each of its ${b.failedJobIds.length} failed jobs is retried as queue:retry-batch does.`,
      verb: verb === 'cancel' ? 'cancel it' : 'retry them',
      run: () => postJson(`api/batches/${encodeURIComponent(b.id)}/${verb}`),
      done: reload,
    });
  return html`<div class="card" data-testid="batch-page">
    <h2>${b.name || '(no name)'} <span class="muted mono">${b.id}</span></h2>
    <p><strong data-testid="batch-status">${batchStatus(b)}</strong> · <${Progress} batch=${b} /></p>
    <table class="fields">
      <tbody>
        <tr>
          <th>Jobs</th>
          <td>${b.totalJobs}: ${b.processedJobs} processed, ${b.pendingJobs} pending, ${b.failedJobs} failed</td>
        </tr>
        <tr>
          <th>Allows failures</th>
          <td>${b.allowFailures ? 'yes' : 'no'}</td>
        </tr>
        <tr>
          <th>Created</th>
          <td>${when(b.createdAt)}</td>
        </tr>
        <tr>
          <th>Cancelled</th>
          <td>${b.cancelledAt ? when(b.cancelledAt) : '—'}</td>
        </tr>
        <tr>
          <th>Finished</th>
          <td>${b.finishedAt ? when(b.finishedAt) : '—'}</td>
        </tr>
      </tbody>
    </table>
    ${
      !READ_ONLY &&
      html`<p>
        ${!b.cancelledAt && !b.finishedAt && html`<button class="danger" data-testid="batch-cancel" onClick=${() => act('cancel')}>Cancel</button>`}
        ${b.failedJobIds.length > 0 && html` <button data-testid="batch-retry" onClick=${() => act('retry-failed')}>Retry failed jobs</button>`}
      </p>`
    }
    <h3>Failed jobs</h3>
    ${b.failedJobIds.length === 0 && html`<p class="muted">None.</p>`}
    <ul data-testid="batch-failed">
      ${b.failedJobIds.map((uuid) => {
        const job = b.failures.find((f) => f.uuid === uuid);
        return html`<li>
          <a class="mono" href=${`#/job/${encodeURIComponent(uuid)}`}>${uuid}</a>
          ${job ? html`<${SideBadge} side=${job.side} /> <span class="muted">${job.exception.split('\n')[0]}</span>` : html`<span class="muted">(no failed record: retried or forgotten)</span>`}
        </li>`;
      })}
    </ul>
  </div>`;
}

/** Node's workers from their heartbeats, and Horizon's masters and supervisors where Horizon runs. */
function WorkersView() {
  const [data, error] = usePoll(() => getJson('api/workers'), []);
  if (error) return html`<div class="notice error">${error}</div>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  return html`<div class="card">
      <h2>Node workers <span class="muted">(${data.node.length})</span></h2>
      <table data-testid="node-workers">
        <thead>
          <tr>
            <th>Host</th>
            <th class="num">Pid</th>
            <th>Queues</th>
            <th class="num">Concurrency</th>
            <th class="num">In hand</th>
            <th>Since</th>
            <th>Last poll</th>
          </tr>
        </thead>
        <tbody>
          ${
            data.node.length === 0 &&
            html`<tr>
              <td colspan="7" class="muted">No Node worker is running (or none keeps its record: lqb work --no-record).</td>
            </tr>`
          }
          ${data.node.map(
            (w) =>
              html`<tr data-testid="node-worker" data-id=${w.id}>
                <td>${w.host}</td>
                <td class="num">${w.pid}</td>
                <td>${w.connection}: ${w.queues.join(', ')}</td>
                <td class="num">${w.concurrency}</td>
                <td class="num" data-testid="in-hand">${w.inHand}</td>
                <td title=${when(w.since)}>${relative(w.since)}</td>
                <td title=${when(w.lastPoll)}>${relative(w.lastPoll)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${
      data.horizon &&
      html`<div class="card">
        <h2>Horizon's supervisors</h2>
        <table data-testid="horizon-masters">
          <thead>
            <tr>
              <th>Master / supervisor</th>
              <th>Status</th>
              <th class="num">Pid</th>
              <th>Processes</th>
            </tr>
          </thead>
          <tbody>
            ${
              data.horizon.length === 0 &&
              html`<tr>
                <td colspan="4" class="muted">Horizon is inactive: no master seen in the last 14 s.</td>
              </tr>`
            }
            ${data.horizon.map(
              (m) =>
                html`<tr class="master">
                    <td><strong>${m.name}</strong> ${m.environment ? html`<span class="muted">${m.environment}</span>` : ''}</td>
                    <td>${m.status}</td>
                    <td class="num">${m.pid ?? ''}</td>
                    <td></td>
                  </tr>
                  ${m.supervisors.map(
                    (sv) =>
                      html`<tr data-testid="horizon-supervisor">
                        <td class="indent">${sv.name}</td>
                        <td>${sv.status}</td>
                        <td class="num">${sv.pid ?? ''}</td>
                        <td>${Object.entries(sv.processes).map(([q, n]) => html`<span class="badge tag">${q}: ${n}</span> `)}</td>
                      </tr>`,
                  )}`,
            )}
          </tbody>
        </table>
      </div>`
    }`;
}

/** The last hour per class and per queue: Node's record, Horizon's metrics, failures by side; which classes Node's workers take. */
function ActivityView() {
  const [data, error] = usePoll(() => getJson('api/activity'), []);
  if (error) return html`<div class="notice error">${error}</div>`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const table = (rows, what, testid) =>
    html`<table data-testid=${testid}>
      <thead>
        <tr>
          <th>${what}</th>
          <th class="num" title="jobs Node's workers finished, from their record">Node ran</th>
          <th class="num">Node failed</th>
          <th class="num">Node runtime</th>
          <th class="num" title="Horizon's count: PHP's workers, and Node's under --horizon">Horizon ran</th>
          <th class="num">Failed (PHP / Node / ?)</th>
          ${what === 'Class' && html`<th title="whether a running Node worker has a handler for it">Node handler</th>`}
          <th title="green: Node's record; blue: Horizon's snapshots">Jobs per minute</th>
          <th title="purple: Node's record; light blue: Horizon's snapshots">Runtime per minute</th>
        </tr>
      </thead>
      <tbody>
        ${
          rows.length === 0 &&
          html`<tr>
            <td colspan="9" class="muted">Nothing recorded in the last hour.</td>
          </tr>`
        }
        ${rows.map(
          (r) =>
            html`<tr data-testid="activity-row" data-name=${r.name}>
              <td><strong>${r.name}</strong></td>
              <td class="num" data-testid="node-ran">${r.node.completed}</td>
              <td class="num failed">${r.node.failed}</td>
              <td class="num">${r.node.runtimeMs == null ? '—' : `${r.node.runtimeMs} ms`}</td>
              <td class="num" data-testid="horizon-ran" title=${r.horizon ? '' : 'PHP’s finished jobs cannot be known without Horizon'}>
                ${r.horizon ? r.horizon.throughput : data.horizon ? '0' : 'unknown'}
              </td>
              <td class="num" data-testid="failed-sides">${r.failed.php} / ${r.failed.node} / ${r.failed.unknown}</td>
              ${what === 'Class' && html`<td data-testid="node-handles">${r.nodeHandles == null ? '?' : r.nodeHandles ? 'yes' : 'no'}</td>`}
              <td><${Spark} values=${r.perMinute} />${r.horizon && html`<${Spark} values=${r.horizon.perMinute} color="#2f80ed" />`}</td>
              <td>
                <${Spark}
                  values=${r.runtimePerMinute.map((v) => v ?? 0)}
                  color="#9b51e0"
                />${r.horizon && html`<${Spark} values=${r.horizon.runtimePerMinute.map((v) => v ?? 0)} color="#56ccf2" />`}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>`;
  return html`<div class="card">
      <h2>Who runs what, last hour</h2>
      <p class="muted legend">
        Node's side is exact (its workers' own record).
        ${data.horizon ? "Horizon's counts are every side it measures." : "PHP's finished jobs cannot be known without Horizon: they show as unknown, not as zero."}
        Failures are from failed_jobs, by the side their trace names.
      </p>
      ${table(data.classes, 'Class', 'activity-classes')}
    </div>
    <div class="card">
      <h2>Per queue</h2>
      ${table(data.queues, 'Queue', 'activity-queues')}
    </div>`;
}

/** Sixty values as a small bar line. */
function Spark({ values, color = '#6fcf97' }) {
  const w = 120,
    h = 20,
    max = Math.max(1, ...values),
    bw = w / values.length;
  return html`<svg width=${w} height=${h} viewBox="0 0 ${w} ${h}" class="chart">
    ${values.map((v, i) => v > 0 && html`<rect x=${i * bw} y=${h - (v / max) * h} width=${bw} height=${(v / max) * h} fill=${color} />`)}
  </svg>`;
}

/** The jobs Node's workers completed last, from their record (Horizon's completed list is under Horizon's records). */
function CompletedView({ route }) {
  const path = `api/completed?offset=${route.offset}&limit=${PAGE}`;
  const [data, error] = usePoll(() => getJson(path), [path]);
  return html`<div class="card">
    <h2>Completed by Node's workers ${data && html`<span class="muted">(${data.total} kept)</span>`}</h2>
    ${error && html`<div class="notice error">${error}</div>`}
    ${
      data &&
      html`<table data-testid="completed">
          <thead>
            <tr>
              <th>Job</th>
              <th>Queue</th>
              <th class="num">Runtime</th>
              <th>Finished</th>
            </tr>
          </thead>
          <tbody>
            ${
              data.jobs.length === 0 &&
              html`<tr>
                <td colspan="4" class="muted">None recorded.</td>
              </tr>`
            }
            ${data.jobs.map(
              (job) =>
                html`<tr data-testid="completed-job" data-uuid=${job.uuid}>
                  <td>
                    <${JobLink} job=${job} />
                    <div class="mono muted">${job.uuid}</div>
                  </td>
                  <td>${job.connection}:${job.queue}</td>
                  <td class="num">${job.runtimeMs} ms</td>
                  <td title=${when(job.finishedAt)}>${relative(job.finishedAt)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <${Pager} total=${data.total} offset=${route.offset} href=${(o) => `#/completed/${o}`} />`
    }
  </div>`;
}

/** Horizon's monitored tags, and a tag's jobs (recent or failed), as Horizon's Monitoring page shows them. */
function TagsView({ route }) {
  const { tag, failed, offset } = route;
  const path = tag
    ? `api/horizon/tags/${encodeURIComponent(tag)}?offset=${offset}&limit=${PAGE}${failed ? '&failed=1' : ''}`
    : 'api/horizon/tags';
  const [data, error] = usePoll(() => getJson(path), [path]);
  if (error) return html`<div class="card"><div class="notice error">${error}</div></div>`;
  // Until the new path answers, `data` may still be the other view's (the tags, or a tag's jobs).
  if (!data || (tag ? !data.jobs : !data.tags)) return html`<p class="muted">Loading…</p>`;
  if (!tag)
    return html`<div class="card">
      <h2>Monitored tags</h2>
      <table data-testid="horizon-tags">
        <thead>
          <tr>
            <th>Tag</th>
            <th class="num">Jobs</th>
            <th class="num">Failed</th>
          </tr>
        </thead>
        <tbody>
          ${
            data.tags.length === 0 &&
            html`<tr>
              <td colspan="3" class="muted">Horizon monitors no tag (horizon's Monitoring page adds them).</td>
            </tr>`
          }
          ${data.tags.map(
            (t) =>
              html`<tr data-testid="horizon-tag" data-tag=${t.tag}>
                <td><a href=${`#/horizon/tags/${encodeURIComponent(t.tag)}`}>${t.tag}</a></td>
                <td class="num" data-testid="tag-jobs">${t.jobs}</td>
                <td class="num failed"><a href=${`#/horizon/tags/${encodeURIComponent(t.tag)}/failed`}>${t.failed}</a></td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  const href = (f, o = 0) => `#/horizon/tags/${encodeURIComponent(tag)}${f ? '/failed' : ''}/${o}`;
  return html`<div class="card">
    <h2>Tag <span class="badge tag">${tag}</span> <span class="muted">(${data.total})</span></h2>
    <div class="tabs">
      <a class=${failed ? '' : 'active'} href=${href(false)}>jobs</a><a class=${failed ? 'active' : ''} href=${href(true)}>failed</a>
    </div>
    <table data-testid="tagged-jobs">
      <thead>
        <tr>
          <th>Job</th>
          <th>Queue</th>
          <th>Command</th>
        </tr>
      </thead>
      <tbody>
        ${
          data.jobs.length === 0 &&
          html`<tr>
            <td colspan="3" class="muted">None kept.</td>
          </tr>`
        }
        ${data.jobs.map(
          (job) =>
            html`<tr data-testid="tagged-job" data-uuid=${job.uuid}>
              <td>
                <${JobLink} job=${job} /><${SideBadge} side=${job.side} />
                <div class="mono muted">${job.uuid}</div>
                <${HorizonStatus} job=${job} />
              </td>
              <td>${job.connection}:${job.queue}</td>
              <td><${Properties} job=${job} /></td>
            </tr>`,
        )}
      </tbody>
    </table>
    <${Pager} total=${data.total} offset=${offset} href=${(o) => href(failed, o)} />
  </div>`;
}

/** Opens a job's page from a uuid typed or pasted in. */
function GoToJob() {
  const [text, setText] = useState('');
  const go = (e) => {
    e.preventDefault();
    const uuid = text.trim();
    if (uuid) location.hash = `#/job/${encodeURIComponent(uuid)}`;
  };
  return html`<form class="goto" onSubmit=${go}>
    <input data-testid="goto-uuid" placeholder="a job's uuid" value=${text} onInput=${(e) => setText(e.target.value)} />
  </form>`;
}

function App() {
  const route = useRoute();
  const [ask, setAsk] = useState(null);
  const [notice, setNotice] = useState(null);
  const onDone = (done) => {
    setAsk(null);
    if (done) {
      setNotice('Done.');
      done();
      setTimeout(() => setNotice(null), 3000);
    }
  };
  return html`<header>
      <h1>lqb ui</h1>
      <nav>
        <a href="#/" class=${route.view === 'overview' || route.view === 'queue' ? 'active' : ''}>Queues</a>
        <a href="#/failed" class=${route.view === 'failed' ? 'active' : ''} data-testid="nav-failed">Failed jobs</a>
        <a href="#/batches" class=${route.view === 'batches' || route.view === 'batch' ? 'active' : ''} data-testid="nav-batches"
          >Batches</a
        >
        <a href="#/activity" class=${route.view === 'activity' ? 'active' : ''} data-testid="nav-activity">Who runs what</a>
        <a href="#/completed" class=${route.view === 'completed' ? 'active' : ''} data-testid="nav-completed">Completed</a>
        <a href="#/workers" class=${route.view === 'workers' ? 'active' : ''} data-testid="nav-workers">Workers</a>
        <a href="#/search" class=${route.view === 'search' ? 'active' : ''} data-testid="nav-search">Search</a>
      </nav>
      <${GoToJob} />
      <span class="meta">${READ_ONLY ? 'read-only · ' : ''}refreshes every ${POLL_MS / 1000}s</span>
    </header>
    <main>
      ${notice && html`<div class="notice info" data-testid="notice">${notice}</div>`}
      ${route.view === 'overview' && html`<${Overview} setAsk=${setAsk} />`}
      ${route.view === 'queue' && html`<${QueueView} route=${route} setAsk=${setAsk} />`}
      ${route.view === 'failed' && html`<${FailedView} route=${route} setAsk=${setAsk} />`}
      ${route.view === 'horizon' && html`<${HorizonJobsView} route=${route} />`}
      ${route.view === 'job' && html`<${JobView} route=${route} setAsk=${setAsk} />`}
      ${route.view === 'search' && html`<${SearchView} route=${route} />`} ${route.view === 'tags' && html`<${TagsView} route=${route} />`}
      ${route.view === 'workers' && html`<${WorkersView} />`} ${route.view === 'activity' && html`<${ActivityView} />`}
      ${route.view === 'completed' && html`<${CompletedView} route=${route} />`}
      ${route.view === 'batches' && html`<${BatchesListView} route=${route} />`}
      ${route.view === 'batch' && html`<${BatchView} route=${route} setAsk=${setAsk} />`}
    </main>
    ${ask && html`<${Confirm} ask=${ask} onDone=${onDone} />`}`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
