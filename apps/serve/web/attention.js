// The attention view: POST /v1/attention for the last exchange (or a text) and a layer, one
// head's map or all heads as small multiples, a token strip that shows what the hovered token
// attends to, and each head's dominant pattern computed from the numbers (summarise()).
import { postJson, ApiError } from './api.js';
import { colour, css, ink, drawHead, drawAll, cellAt, thumbnail } from './heatmap.js';
import { ImageAttention } from './image_attention.js';

// A head's dominant pattern. Over the queries i = 2..n-1 (query 0 sees only itself and for query 1
// the previous token is the first one), the mean probability on the previous token (i-1), the
// first token (0) and the query itself (i). The largest of the three names the head when it holds
// at least half of the attention (more than all other keys together), and names it "partly" when
// it holds at least a quarter (several times a typical key's share: rows of trained heads spread
// over a handful of keys); otherwise the head is "broad". `keys` is the mean perplexity
// exp(entropy) of a row: about how many keys a query spreads over.
export function summarise(P) {
  const n = P.length;
  const start = n >= 3 ? 2 : 1;
  if (n < 2) return { label: 'too short', prev: 0, first: 0, self: 0, keys: 1 };
  let prev = 0, first = 0, self = 0, keys = 0;
  for (let i = start; i < n; i++) {
    prev += P[i][i - 1];
    first += P[i][0];
    self += P[i][i];
    let H = 0;
    for (let k = 0; k <= i; k++) if (P[i][k] > 0) H -= P[i][k] * Math.log(P[i][k]);
    keys += Math.exp(H);
  }
  const m = n - start;
  const s = { prev: prev / m, first: first / m, self: self / m, keys: keys / m };
  const named = [['previous token', s.prev], ['first token', s.first], ['self', s.self]];
  named.sort((a, b) => b[1] - a[1]);
  const [pattern, mass] = named[0];
  s.label = mass >= 0.5 ? pattern : mass >= 0.25 ? `partly ${pattern}` : 'broad';
  s.mass = mass;
  return s;
}

// How a token piece is shown: whitespace made visible, never empty.
export function showPiece(p) {
  if (p === '') return '∅';
  return p.replace(/\n/g, '⏎').replace(/\t/g, '⇥').replace(/^ /, '·').replace(/ $/, '·');
}

const $ = id => document.getElementById(id);

// "previous token · 62%", "broad · ≈6.9 keys".
function describe(s) {
  return s.label === 'broad' ? `broad · ≈${s.keys.toFixed(1)} keys` : `${s.label} · ${percent(s.mass)}`;
}

function percent(p) {
  if (p === 0) return '0';
  const v = 100 * p;
  return `${v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2)}%`;
}

export class AttentionView {
  // source(): { body: {messages | prompt}, label, image (the image's URL as sent, or null) } of
  // what to look at; info(): the model info.
  constructor(source, info, onError) {
    this.source = source;
    this.info = info;
    this.onError = onError;
    this.dialog = $('attention-dialog');
    this.canvas = $('attention');
    this.layer = 0;
    this.head = 0;
    this.mode = 'one';  // or 'all': every head of the layer as small multiples
    this.cache = new Map();
    this.data = null;
    this.hover = null;
    this.images = new ImageAttention(h => { this.select(h); this.setMode('one'); });
    this.wire();
  }

  wire() {
    $('attention-close').addEventListener('click', () => this.dialog.close());
    this.dialog.addEventListener('click', e => { if (e.target === this.dialog) this.dialog.close(); });
    $('layer').addEventListener('change', e => { this.layer = Number(e.target.value); this.load(); });
    for (const b of document.querySelectorAll('[data-mode]'))
      b.addEventListener('click', () => this.setMode(b.dataset.mode));
    // Pointer events: a mouse hovers; a finger taps (and the cell stays shown after it lifts).
    this.canvas.addEventListener('pointermove', e => this.pointer(e));
    this.canvas.addEventListener('pointerdown', e => this.pointer(e));
    this.canvas.addEventListener('pointerleave', e => {
      if (e.pointerType !== 'mouse') return;
      this.hover = null;
      $('attention-tip').hidden = true;
      this.draw();
      this.strip();
    });
    this.canvas.addEventListener('click', e => this.click(e));
    new ResizeObserver(() => this.draw()).observe($('attention-wrap'));
  }

  // Layers with an attention map: all of them, or a hybrid model's full-attention layers (its
  // linear-attention layers keep a recurrent state, not scores over keys).
  open() {
    const info = this.info();
    const n = info.n_layer || 1;
    const layers = info.attention_layers || Array.from({ length: n }, (_, i) => i);
    const select = $('layer');
    if (select.dataset.layers !== layers.join(',')) {
      select.replaceChildren(...layers.map(i => new Option(`${i}`, `${i}`)));
      select.dataset.layers = layers.join(',');
      if (!layers.includes(this.layer)) this.layer = layers[0];
    }
    select.value = `${this.layer}`;
    const linear = info.linear_layers || [];
    $('attention-linear').hidden = !linear.length;
    $('attention-linear').textContent = linear.length
      ? `Layers ${linear.join(', ')} are linear attention (Gated DeltaNet): they keep a fixed-size state instead of attending over the keys, so they have no map.`
      : '';
    if (!this.dialog.open) this.dialog.showModal();
    this.load();
  }

  async load() {
    const src = this.source();
    $('attention-source').textContent = src.label;
    const key = JSON.stringify([src.body, this.layer]);
    this.state('Computing attention…');
    try {
      let data = this.cache.get(key);
      if (!data) {
        data = await postJson('/v1/attention', { ...src.body, layer: this.layer });
        if (!Array.isArray(data.heads) || !data.heads.length) throw new ApiError('The server sent no heads.', 500);
        this.cache.set(key, data);
      }
      if (JSON.stringify([this.source().body, this.layer]) !== key) return;  // asked for another meanwhile
      this.data = data;
      this.summaries = data.heads.map(summarise);
      this.head = Math.min(this.head, data.heads.length - 1);
      this.state('');
      this.heads();
      this.draw();
      this.strip();
    } catch (e) {
      this.data = null;
      this.draw();
      $('heads').replaceChildren();
      $('tokens').replaceChildren();
      $('attention-caption').textContent = '';
      const why = e instanceof ApiError && e.status === 404
        ? 'This server has no POST /v1/attention: update vkllm.'
        : e.message;
      this.state(why, true);
      this.onError(e);
    }
  }

  state(text, error = false) {
    const s = $('attention-state');
    s.textContent = text;
    s.classList.toggle('error', error);
  }

  setMode(mode) {
    this.mode = mode;
    for (const b of document.querySelectorAll('[data-mode]')) b.setAttribute('aria-pressed', `${b.dataset.mode === mode}`);
    this.hover = null;
    this.draw();
  }

  select(h) {
    this.head = h;
    for (const b of $('heads').children) b.setAttribute('aria-pressed', `${Number(b.dataset.head) === h}`);
    this.draw();
    this.strip();
  }

  kvHead(h) {
    const i = this.info();
    if (!i.n_head || !i.n_head_kv || i.attention === 'MLA' || i.n_head_kv === i.n_head) return '';
    return `KV ${Math.floor(h / (i.n_head / i.n_head_kv))}`;
  }

  title(h) {
    return `Head ${h}`;
  }

  heads() {
    const list = $('heads');
    list.replaceChildren();
    this.data.heads.forEach((P, h) => {
      const s = this.summaries[h];
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'head';
      b.dataset.head = `${h}`;
      b.dataset.testid = 'attention-head';
      b.setAttribute('aria-pressed', `${h === this.head}`);
      const c = document.createElement('canvas');
      thumbnail(c, P);
      const text = document.createElement('div');
      const t = document.createElement('div');
      t.className = 'head-title';
      t.textContent = `${this.title(h)} `;
      const kv = this.kvHead(h);
      if (kv) {
        const small = document.createElement('small');
        small.textContent = `· ${kv}`;
        t.append(small);
      }
      const p = document.createElement('div');
      p.className = `head-pattern${s.label === 'broad' ? ' broad' : ''}`;
      p.textContent = describe(s);
      const nums = document.createElement('div');
      nums.className = 'head-nums';
      nums.textContent = `prev ${percent(s.prev)} · first ${percent(s.first)} · self ${percent(s.self)}`;
      // gpt-oss: the head's sink takes the rest of each row; its mean share says how idle the head is.
      if (this.data.sink_share) {
        const sink = document.createElement('span');
        sink.dataset.testid = 'sink-share';
        sink.textContent = ` · sink ${percent(this.data.sink_share[h])}`;
        nums.append(sink);
      }
      text.append(t, p, nums);
      b.append(c, text);
      b.addEventListener('click', () => { this.select(h); this.setMode('one'); });
      list.append(b);
    });
  }

  labels() {
    return this.data.pieces.map(showPiece);
  }

  draw() {
    const image = this.data && this.data.images && this.data.images.length ? this.source().image : null;
    $('image-rank').hidden = !image;
    this.images.show(this.data, image, this.head, this.hover ? this.hover.q : null);
    if (!this.data) {
      const g = this.canvas.getContext('2d');
      g.clearRect(0, 0, this.canvas.width, this.canvas.height);
      return;
    }
    const n = this.data.tokens.length;
    const cap = $('attention-caption');
    if (this.mode === 'all') {
      this.layoutInfo = null;
      this.tiles = drawAll(this.canvas, this.data.heads, this.data.heads.map((_, h) => `${this.title(h)} · ${this.summaries[h].label}`), this.head);
      cap.replaceChildren(`All ${this.data.heads.length} heads of layer ${this.layer} over ${n} tokens. Click one to open it.`);
      return;
    }
    this.tiles = null;
    const L = drawHead(this.canvas, this.data.heads[this.head], this.labels(), this.hover);
    this.layoutInfo = L;
    // Where the cells are, for tests that point at one.
    Object.assign(this.canvas.dataset, { x0: L.x0.toFixed(1), y0: L.y0.toFixed(1), cell: L.cell.toFixed(3) });
    const s = this.summaries[this.head];
    const b = document.createElement('b');
    b.textContent = `Layer ${this.layer}, head ${this.head}`;
    cap.replaceChildren(b, ` · ${describe(s)} · ${n} tokens · rows: queries, columns: keys · hover to inspect`);
  }

  pointer(e) {
    if (!this.data) return;
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    const tip = $('attention-tip');
    if (this.mode === 'all') {
      const t = this.tileAt(x, y);
      this.canvas.style.cursor = t ? 'pointer' : 'default';
      tip.hidden = true;
      return;
    }
    this.canvas.style.cursor = 'crosshair';
    const cell = this.layoutInfo && cellAt(this.layoutInfo, x, y);
    this.hover = cell;
    this.draw();
    this.strip();
    if (!cell) { tip.hidden = true; return; }
    const p = this.data.heads[this.head][cell.q][cell.k];
    const L = this.labels();
    tip.textContent = `${L[cell.q]} → ${L[cell.k]}: ${cell.k > cell.q ? 'after the query' : percent(p)}`;
    tip.hidden = false;
    const left = Math.min(x + 14, r.width - tip.offsetWidth - 4);
    tip.style.left = `${Math.max(4, left)}px`;
    tip.style.top = `${Math.max(4, y - 30)}px`;
  }

  tileAt(x, y) {
    return (this.tiles || []).find(t => x >= t.x && x < t.x + t.size && y >= t.y && y < t.y + t.size);
  }

  click(e) {
    if (this.mode !== 'all') return;
    const r = this.canvas.getBoundingClientRect();
    const t = this.tileAt(e.clientX - r.left, e.clientY - r.top);
    if (t) { this.select(t.head); this.setMode('one'); }
  }

  // The tokens as a strip; the hovered query's row colours each key by its probability.
  strip() {
    const box = $('tokens');
    if (!this.data) return;
    const P = this.data.heads[this.head];
    const q = this.hover ? this.hover.q : null;
    const L = this.labels();
    if (box.children.length !== L.length) {
      box.replaceChildren(...L.map((text, i) => {
        const s = document.createElement('span');
        s.className = 'tok';
        s.textContent = text;
        s.dataset.i = `${i}`;
        s.addEventListener('pointerenter', () => { this.hover = { q: i }; this.draw(); this.strip(); });
        s.addEventListener('pointerleave', e => {
          if (e.pointerType === 'mouse') { this.hover = null; this.draw(); this.strip(); }
        });
        return s;
      }));
    }
    [...box.children].forEach((s, k) => {
      s.classList.toggle('q', k === q);
      if (q === null || k > q) {
        s.style.background = '';
        s.style.color = '';
        s.title = '';
      } else {
        s.style.background = css(colour(P[q][k]));
        s.style.color = ink(P[q][k]);
        s.title = percent(P[q][k]);
      }
    });
  }
}
