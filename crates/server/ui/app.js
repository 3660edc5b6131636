// The memory browser: a few views over the HTTP API, rendered with DOM calls only (text from
// memory is never parsed as HTML). With API keys, the key is asked for once and kept in this
// browser's local storage; without, the server answers in its single tenant.
'use strict';

const main = document.getElementById('main');
const KEY = 'epimem.api-key';

class NeedKey extends Error {}

async function api(method, path, body) {
  const headers = {};
  const key = localStorage.getItem(KEY);
  if (key) headers.authorization = 'Bearer ' + key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) throw new NeedKey();
  const text = await response.text();
  let data = text;
  try { data = JSON.parse(text); } catch (_) { /* not JSON: keep the text */ }
  if (!response.ok) {
    const message = data && data.error ? data.error.message : text;
    throw new Error(`${response.status}: ${message}`);
  }
  return data;
}

// el('p', {class: 'muted'}, 'text', child…): strings become text nodes, never HTML.
function el(tag, attrs, ...children) {
  const svg = ['svg', 'circle', 'line', 'polyline', 'a', 'title', 'text'].includes(tag) && attrs && attrs.svg;
  const node = svg
    ? document.createElementNS('http://www.w3.org/2000/svg', tag)
    : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === 'svg' || value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// Counts the pages asked for; a page still loading when another was asked for shows nothing
// (else one slow to load would replace the page asked for after it).
let renders = 0;

function show(token, title, ...nodes) {
  if (token !== renders) return;
  document.title = `${title} · epimem`;
  main.replaceChildren(el('h1', {}, title), ...nodes.flat(Infinity).filter(Boolean));
  main.focus();
}

function when(rfc3339) {
  const d = new Date(rfc3339);
  return Number.isNaN(d.getTime()) ? rfc3339 : d.toISOString().slice(0, 16).replace('T', ' ');
}

function askForKey(retry, token) {
  const input = el('input', { id: 'api-key', type: 'password', autocomplete: 'off', required: true });
  const form = el('form', {
    onsubmit: (event) => {
      event.preventDefault();
      localStorage.setItem(KEY, input.value.trim());
      document.getElementById('forget-key').hidden = false;
      retry();
    },
  },
  el('p', {}, 'This server needs an API key (epimem keys create). It is kept in this browser only.'),
  el('label', { for: 'api-key' }, 'API key'), input, ' ', el('button', { type: 'submit' }, 'Use this key'));
  show(token, 'API key', form);
  input.focus();
}

async function render() {
  const token = ++renders;
  const hash = location.hash || '#/timeline';
  const [, view, ...rest] = hash.split('/');
  const arg = rest.length ? decodeURIComponent(rest.join('/')) : null;
  try {
    if (view === 'episode' && arg) await episodePage(arg, token);
    else if (view === 'search') await searchPage(arg, token);
    else if (view === 'health') await healthPage(token);
    else await timelinePage(arg, token);
  } catch (e) {
    if (e instanceof NeedKey) askForKey(render, token);
    else show(token, 'Something went wrong', el('p', { class: 'error', role: 'alert' }, e.message));
  }
}

// The episodes of a span on a time axis: x by start, radius by messages, colour by surprise.
function axis(episodes, start, end) {
  const from = new Date(start).getTime();
  const to = Math.max(new Date(end).getTime(), from + 1);
  const width = 1000;
  const svg = el('svg', {
    svg: true, class: 'axis', viewBox: `0 0 ${width} 90`, role: 'img',
    'aria-label': `${episodes.length} episodes from ${when(start)} to ${when(end)}`,
  });
  svg.append(el('line', { svg: true, x1: 0, y1: 45, x2: width, y2: 45, stroke: '#999' }));
  for (const e of episodes) {
    const x = 10 + ((new Date(e.start).getTime() - from) / (to - from)) * (width - 20);
    const r = 4 + Math.min(16, Math.sqrt(e.message_count) * 2);
    // Surprise 0 → blue, 1 → red.
    const hue = Math.round(220 - 220 * Math.max(0, Math.min(1, e.surprise)));
    const link = el('a', { svg: true, href: `#/episode/${encodeURIComponent(e.id)}` },
      el('circle', { svg: true, cx: x.toFixed(1), cy: 45, r: r.toFixed(1), fill: `hsl(${hue} 70% 45%)`, 'fill-opacity': 0.8 }),
      el('title', { svg: true }, `${e.title} (${when(e.start)}, ${e.message_count} messages, surprise ${e.surprise.toFixed(2)})`));
    svg.append(link);
  }
  return svg;
}

function episodeTable(episodes) {
  if (!episodes.length) return el('p', { class: 'muted' }, 'No episodes.');
  return el('table', {},
    el('caption', { class: 'muted' }, 'Episodes, newest first'),
    el('thead', {}, el('tr', {}, ['Began', 'Title', 'Conversation', 'Messages', 'Surprise'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, episodes.map((e) => el('tr', {},
      el('td', {}, when(e.start)),
      el('td', {}, el('a', { href: `#/episode/${encodeURIComponent(e.id)}` }, e.title || '(untitled)')),
      el('td', {}, e.conversation),
      el('td', {}, e.message_count),
      el('td', {}, e.surprise.toFixed(2))))));
}

async function timelinePage(nodeId, token) {
  if (!nodeId) {
    const [top, recent] = await Promise.all([api('GET', '/v1/timeline'), api('GET', '/v1/episodes?limit=200')]);
    const eps = recent.episodes;
    const parts = [];
    if (top.nodes.length) {
      parts.push(el('h2', {}, 'Periods'), nodeList(top.nodes.map((n) => [n.id, n])));
    }
    parts.push(el('h2', {}, 'Latest episodes'));
    if (eps.length) parts.push(axis(eps, eps[eps.length - 1].start, eps[0].end));
    parts.push(episodeTable(eps));
    show(token, 'Timeline', ...parts);
    return;
  }
  const node = await api('GET', `/v1/timeline/${encodeURIComponent(nodeId)}`);
  const query = new URLSearchParams({ since: node.start, until: node.end, limit: '1000' });
  const inside = (await api('GET', `/v1/episodes?${query}`)).episodes
    .filter((e) => e.start >= node.start && e.start < node.end);
  const parts = [
    el('p', { class: 'muted' }, `${node.level} · ${when(node.start)} to ${when(node.end)} · ${node.episodes} episodes, ${node.messages} messages · version ${node.version}`),
    el('h2', {}, node.title || '(untitled)'),
    el('ul', {}, node.bullets.map((b) => el('li', {}, b))),
    node.names.length ? el('p', { class: 'muted' }, `Names: ${node.names.join(', ')}`) : '',
    axis(inside, node.start, node.end),
  ];
  if (node.level !== 'day') {
    const children = await Promise.all(node.children.map((c) => api('GET', `/v1/timeline/${encodeURIComponent(c)}`).then((n) => [c, n], () => [c, null])));
    parts.push(el('h2', {}, 'Within it'), nodeList(children));
  } else {
    parts.push(el('h2', {}, 'Episodes'), episodeTable(inside.slice().reverse()));
  }
  show(token, `Timeline: ${nodeId.replace(/^toc:/, '')}`, el('p', {}, el('a', { href: '#/timeline' }, '← the top of the timeline')), ...parts);
}

function nodeList(nodes) {
  return el('ul', { class: 'nodes' }, nodes.map(([id, n]) => el('li', {},
    el('a', { href: `#/timeline/${encodeURIComponent(id)}` }, id.replace(/^toc:/, '')),
    n ? [' — ', n.title || '(untitled)', el('span', { class: 'muted' }, ` (${n.episodes} episodes)`)] : el('span', { class: 'muted' }, ' (not rolled up yet)'))));
}

// The forgetting curve: the probability of recall from the last review on, and now.
function curveChart(memory) {
  const points = memory.curve;
  if (points.length < 2) return null;
  const [w, h, pad] = [600, 160, 30];
  const t0 = new Date(points[0].at).getTime();
  const t1 = new Date(points[points.length - 1].at).getTime();
  const x = (at) => pad + ((new Date(at).getTime() - t0) / Math.max(1, t1 - t0)) * (w - 2 * pad);
  const y = (r) => h - pad + (pad * 2 - h) * r;
  const line = points.map((p) => `${x(p.at).toFixed(1)},${y(p.retrievability).toFixed(1)}`).join(' ');
  const svg = el('svg', {
    svg: true, class: 'curve', viewBox: `0 0 ${w} ${h}`, role: 'img',
    'aria-label': `Probability of recall: ${memory.retrievability.toFixed(2)} now, ${points[points.length - 1].retrievability.toFixed(2)} by ${when(points[points.length - 1].at)}`,
  });
  svg.append(
    el('line', { svg: true, x1: pad, y1: y(0), x2: w - pad, y2: y(0), stroke: '#999' }),
    el('line', { svg: true, x1: pad, y1: y(0), x2: pad, y2: y(1), stroke: '#999' }),
    el('text', { svg: true, x: 2, y: y(1) + 4, 'font-size': 11 }, '1'),
    el('text', { svg: true, x: 2, y: y(0) + 4, 'font-size': 11 }, '0'),
    el('text', { svg: true, x: pad, y: h - 8, 'font-size': 11 }, when(points[0].at).slice(0, 10)),
    el('text', { svg: true, x: w - pad - 62, y: h - 8, 'font-size': 11 }, when(points[points.length - 1].at).slice(0, 10)),
    el('polyline', { svg: true, points: line, fill: 'none', stroke: '#0b3d91', 'stroke-width': 2 }));
  const now = Date.now();
  if (now >= t0 && now <= t1) {
    const nx = x(new Date(now).toISOString());
    svg.append(el('line', { svg: true, x1: nx, y1: y(0), x2: nx, y2: y(1), stroke: '#8a1c1c', 'stroke-dasharray': '4 3' }),
      el('text', { svg: true, x: nx + 3, y: y(1) + 10, 'font-size': 11 }, 'now'));
  }
  return svg;
}

// Stability after each review: how long the memory holds, as reviews strengthen it.
function stabilityChart(reviews) {
  const points = reviews.filter((r) => r.at && r.stability_days !== null);
  if (!points.length) return null;
  const [w, h, pad] = [600, 120, 30];
  const top = Math.max(...points.map((r) => r.stability_days), 1);
  const t0 = new Date(points[0].at).getTime();
  const t1 = Math.max(new Date(points[points.length - 1].at).getTime(), t0 + 1);
  const x = (at) => pad + ((new Date(at).getTime() - t0) / (t1 - t0)) * (w - 2 * pad);
  const y = (v) => h - pad + ((pad * 2 - h) * v) / top;
  const svg = el('svg', {
    svg: true, class: 'curve', viewBox: `0 0 ${w} ${h}`, role: 'img',
    'aria-label': `Stability after each review, from ${points[0].stability_days.toFixed(1)} to ${points[points.length - 1].stability_days.toFixed(1)} days`,
  });
  svg.append(
    el('line', { svg: true, x1: pad, y1: y(0), x2: w - pad, y2: y(0), stroke: '#999' }),
    el('text', { svg: true, x: 2, y: y(top) + 4, 'font-size': 11 }, `${top.toFixed(0)} d`),
    el('polyline', { svg: true, points: points.map((r) => `${x(r.at).toFixed(1)},${y(r.stability_days).toFixed(1)}`).join(' '), fill: 'none', stroke: '#0b3d91', 'stroke-width': 2 }),
    ...points.map((r) => el('circle', { svg: true, cx: x(r.at).toFixed(1), cy: y(r.stability_days).toFixed(1), r: 4, fill: '#0b3d91' })));
  return svg;
}

async function episodePage(id, token) {
  const path = `/v1/episodes/${encodeURIComponent(id)}`;
  const [e, history] = await Promise.all([api('GET', path), api('GET', `${path}/versions`)]);
  const drawn = (await api('GET', `/v1/facts?conversation=${encodeURIComponent(e.conversation)}&all=true&limit=1000`))
    .facts.filter((f) => f.sources.includes(e.id));
  const status = el('p', { role: 'status' });
  const title = el('input', { id: 'edit-title', value: e.title, required: true, size: 60 });
  const summary = el('textarea', { id: 'edit-summary', rows: 4, cols: 60 }, e.summary);
  const edit = el('form', {
    onsubmit: async (event) => {
      event.preventDefault();
      const change = {};
      if (title.value !== e.title) change.title = title.value;
      if (summary.value !== e.summary) change.summary = summary.value;
      if (!Object.keys(change).length) { status.textContent = 'Nothing changed.'; return; }
      // This page again, unless another is asked for meanwhile.
      const again = ++renders;
      try {
        await api('PATCH', path, change);
        await episodePage(id, again);
        if (again === renders) main.querySelector('[role=status]').textContent = 'Saved; the old text is kept as a version.';
      } catch (err) {
        status.className = 'error';
        status.textContent = `Not saved: ${err.message}`;
      }
    },
  },
  el('h2', {}, 'Correct it'),
  el('p', {}, el('label', { for: 'edit-title' }, 'Title'), el('br'), title),
  el('p', {}, el('label', { for: 'edit-summary' }, 'Summary'), el('br'), summary),
  el('button', { type: 'submit' }, 'Save'));
  const remove = el('button', {
    type: 'button', class: 'danger',
    onclick: async () => {
      if (!confirm(`Forget "${e.title}"? Its text is deleted for good.`)) return;
      try {
        await api('DELETE', `/v1/episodes/${encodeURIComponent(id)}`);
        location.hash = '#/timeline';
      } catch (err) {
        status.className = 'error';
        status.textContent = `Not forgotten: ${err.message}`;
      }
    },
  }, 'Forget this episode');
  const facts = [
    ['Conversation', e.conversation],
    ['When', `${when(e.start)} to ${when(e.end)}`],
    ['Messages', `${e.message_count} (seq ${e.first_seq}–${e.last_seq})`],
    ['Cut because', e.boundary_reason],
    ['Cut and told by', e.told_by === 'llm' ? 'the language model' : 'the LLM-free path'],
    ['Note', e.told_note],
    ['Surprise', e.surprise.toFixed(2)],
    ['Keywords', e.keywords.join(', ')],
  ];
  if (e.skeleton) {
    const s = e.skeleton;
    facts.push(['Work', `${s.prompts} prompts, ${s.investigate} investigate, ${s.execute} execute, ${s.failures} failed`]);
    if (s.hot_files.length) facts.push(['Files', s.hot_files.join(', ')]);
    if (s.commits.length) facts.push(['Commits', s.commits.join(', ')]);
  }
  show(token, e.title || '(untitled)',
    el('p', {}, e.summary),
    el('dl', { class: 'facts' }, facts.filter(([, v]) => v !== null && v !== undefined && v !== '').map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
    e.memory ? [
      el('h2', {}, 'Memory strength'),
      el('p', {}, `Probability of recall now ${e.memory.retrievability.toFixed(2)}`,
        e.memory.stability_days ? ` · stable for ${e.memory.stability_days.toFixed(1)} days` : '',
        e.memory.due ? ` · due ${when(e.memory.due)}` : '',
        e.memory.last_review ? ` · last reviewed ${when(e.memory.last_review)}` : ''),
      curveChart(e.memory),
      el('h3', {}, 'Reviews received'),
      e.memory.reviews.length
        ? [stabilityChart(e.memory.reviews),
          el('ol', {}, e.memory.reviews.map((r) => el('li', {},
            `${r.at ? when(r.at) : '(undated)'}: stable for ${r.stability_days !== null ? r.stability_days.toFixed(1) : '?'} days`,
            r.due ? `, due ${when(r.due)}` : '')))]
        : el('p', { class: 'muted' }, 'None yet: a review comes when a recall of it is rated against what followed.'),
    ] : null,
    el('p', {}, remove), status, edit,
    history.versions.length ? [
      el('h2', {}, 'Earlier versions'),
      el('ol', {}, history.versions.map((v) => el('li', {},
        el('strong', {}, v.title), ` — ${v.summary} `, el('span', { class: 'muted' }, `(replaced ${when(v.replaced_at)})`)))),
    ] : null,
    drawn.length ? [
      el('h2', {}, 'Facts drawn from it'),
      el('ul', {}, drawn.map((f) => el('li', {}, f.text, el('span', { class: 'muted' },
        f.invalid_at ? ` (no longer true since ${when(f.invalid_at)})` : ` (true since ${when(f.valid_at)})`)))),
    ] : null,
    el('h2', {}, 'Messages'),
    el('ol', { class: 'messages' }, (e.messages || []).map((m) => el('li', {},
      el('span', { class: 'who' }, m.speaker || m.role),
      el('span', { class: 'muted' }, `${when(m.timestamp)} `),
      m.content))));
}

async function searchPage(arg, token) {
  const [q, b] = (arg || '').split('\u0000');
  const query = el('input', { id: 'query', type: 'search', value: q || '', required: true, size: 50 });
  const budget = el('select', { id: 'budget' }, ['500', '1000', '2000', '4000'].map((n) => el('option', { value: n, selected: n === (b || '1000') }, `${n} tokens`)));
  const form = el('form', {
    role: 'search',
    onsubmit: (event) => {
      event.preventDefault();
      location.hash = `#/search/${encodeURIComponent(`${query.value}\u0000${budget.value}`)}`;
    },
  }, el('label', { for: 'query' }, 'Query'), query, ' ', el('label', { for: 'budget' }, 'Context budget'), budget, ' ', el('button', { type: 'submit' }, 'Recall'));
  if (!q) { show(token, 'Search', form); query.focus(); return; }
  const [hits, context] = await Promise.all([
    api('POST', '/v1/recall', { query: q, limit: 10 }),
    api('POST', '/v1/recall', { query: q, budget: Number(b || 1000) }),
  ]);
  const parts = (h) => [
    h.lexical_rank ? `words #${h.lexical_rank}` : null,
    h.vector_rank ? `vector #${h.vector_rank}` : null,
    h.similarity !== undefined && h.similarity !== null ? `similarity ${h.similarity.toFixed(2)}` : null,
    h.retrievability !== undefined && h.retrievability !== null ? `retrievability ${h.retrievability.toFixed(2)}` : null,
    h.date_match ? 'date matches' : null,
  ].filter(Boolean).join(', ');
  show(token, 'Search', form,
    el('h2', {}, 'Episodes'),
    hits.hits.length ? el('table', {},
      el('thead', {}, el('tr', {}, ['Score', 'Episode', 'Why', 'Began'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, hits.hits.map((h) => el('tr', {},
        el('td', {}, h.score !== undefined && h.score !== null ? h.score.toFixed(3) : ''),
        el('td', {}, el('a', { href: `#/episode/${encodeURIComponent(h.id)}` }, h.title || '(untitled)')),
        el('td', {}, parts(h)),
        el('td', {}, when(h.start))))))
      : el('p', { class: 'muted' }, 'Nothing recalled.'),
    el('h2', {}, `The context an agent receives (${context.tokens ?? 0} of ${b || 1000} tokens)`),
    el('pre', { class: 'context', 'aria-label': 'Context block' },
      context.nothing_relevant ? 'Nothing remembered bears on this.' : (context.context || '(empty)')));
}

async function healthPage(token) {
  const [jobs, metrics] = await Promise.all([
    api('GET', '/v1/jobs?limit=200'),
    fetch('/metrics').then((r) => r.text()),
  ]);
  const ready = await fetch('/readyz').then((r) => r.ok, () => false);
  const lines = metrics.split('\n').filter((l) => l.startsWith('epimem_'));
  show(token, 'Health',
    el('p', {}, ready ? 'Ready: the search index is open.' : 'Not ready yet: the search index is still opening.'),
    el('h2', {}, 'Jobs'),
    jobs.jobs.length ? el('table', {},
      el('thead', {}, el('tr', {}, ['Job', 'Kind', 'Conversation', 'State', 'Attempts', 'Last error'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, jobs.jobs.map((j) => el('tr', {},
        el('td', {}, j.id), el('td', {}, j.kind || ''), el('td', {}, j.conversation || ''),
        el('td', {}, typeof j.state === 'string' ? j.state : JSON.stringify(j.state)),
        el('td', {}, j.attempts), el('td', { class: j.last_error ? 'error' : '' }, j.last_error || '')))))
      : el('p', { class: 'muted' }, 'No jobs queued, running or parked.'),
    el('h2', {}, 'Counters'),
    el('pre', { class: 'context', 'aria-label': 'Metrics' }, lines.join('\n') || '(none)'));
}

document.getElementById('forget-key').addEventListener('click', () => {
  localStorage.removeItem(KEY);
  document.getElementById('forget-key').hidden = true;
  render();
});
document.getElementById('forget-key').hidden = !localStorage.getItem(KEY);
window.addEventListener('hashchange', render);
render();
