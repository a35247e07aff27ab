// What the page knows about the served model: GET /v1/info (name, architecture, attention kind,
// dimensions, device, KV bytes per token), or only the name and context from GET /v1/models on a
// server without /v1/info. Also fills the header's pills and the KV-cache panel.
import { getJson, ApiError } from './api.js';

export const KINDS = ['MHA', 'GQA', 'MQA', 'MLA', 'HYBRID'];
const CONTEXTS = [['4K', 4096], ['32K', 32768], ['128K', 131072]];

// The model, as { name, architecture, attention, n_layer, n_head, n_head_kv, head_dim, device,
// n_ctx, kv: { model, MHA, GQA, MQA, MLA, HYBRID } (bytes per token), state (a hybrid model's
// linear-attention bytes per sequence), attention_layers, linear_layers }; fields the server did
// not give are undefined.
export async function loadInfo() {
  try {
    return readInfo(await getJson('/v1/info'));
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e;
  }
  const models = await getJson('/v1/models');
  const m = (models.data && models.data[0]) || {};
  return { name: m.id, n_ctx: m.meta && m.meta.n_ctx, kv: {}, partial: true };
}

function pick(o, ...keys) {
  for (const k of keys) if (o && o[k] !== undefined && o[k] !== null && o[k] !== '') return o[k];
  return undefined;
}

// GET /v1/info's fields (apps/serve/api_attention.cpp) into the page's names.
export function readInfo(j) {
  const info = {
    id: pick(j, 'model', 'id'),
    name: pick(j, 'name') ?? pick(j, 'model', 'id'),
    architecture: pick(j, 'architecture', 'arch'),
    attention: pick(j, 'attention', 'attention_kind'),
    n_layer: pick(j, 'n_layer', 'n_layers'),
    n_head: pick(j, 'n_head', 'n_heads'),
    n_head_kv: pick(j, 'n_head_kv', 'n_kv_heads'),
    head_dim: pick(j, 'head_dim'),
    device: pick(j, 'device'),
    n_ctx: pick(j, 'n_ctx'),
    kv_type: pick(j, 'kv_type'),
    max_tokens: pick(j, 'attention_max_tokens'),
    dims: pick(j, 'kv_by_kind_dims') || {},
    kv: {},
    state: pick(j, 'recurrent_bytes_per_sequence'),
    attention_layers: pick(j, 'attention_layers'),
    linear_layers: (pick(j, 'linear_attention') || {}).layers,
    projector: pick(j, 'projector'),
  };
  if (typeof info.device === 'object') info.device = info.device.name;
  const own = pick(j, 'kv_bytes_per_token');
  if (typeof own === 'number') info.kv.model = own;
  const kinds = pick(j, 'kv_bytes_per_token_by_kind') || (typeof own === 'object' ? own : {});
  for (const [k, v] of Object.entries(kinds)) if (KINDS.includes(k.toUpperCase())) info.kv[k.toUpperCase()] = v;
  if (info.kv.model === undefined && info.attention) info.kv.model = info.kv[info.attention];
  if (info.linear_layers && info.linear_layers.length) info.attention = 'HYBRID';  // its row in the KV panel
  return info;
}

export function bytes(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
  return `${u === 0 ? n : Number(n.toPrecision(3))} ${units[u]}`;
}

function pill(id, label, value) {
  const el = document.getElementById(id);
  if (value === undefined || value === null || value === '') { el.hidden = true; return; }
  el.hidden = false;
  el.replaceChildren();
  if (label) el.append(`${label} `);
  const b = document.createElement('b');
  b.textContent = value;
  el.append(b);
}

export function showInfo(info) {
  pill('model-name', '', info.name ?? 'model');
  pill('model-arch', '', info.architecture);
  let attn = info.attention === 'HYBRID' ? 'GQA + linear' : info.attention;
  if (attn && info.n_head) attn += info.n_head_kv && info.attention !== 'MLA' ? ` ${info.n_head}q/${info.n_head_kv}kv` : ` ${info.n_head} heads`;
  pill('model-attn', '', attn);
  pill('model-device', '', info.device);
  showFacts(info);
  showKv(info);
}

function showFacts(info) {
  const join = (...parts) => parts.filter(p => p !== undefined && p !== '').join(' · ') || undefined;
  let heads;
  if (info.n_head) {
    heads = info.n_head_kv && info.attention !== 'MLA' ? `${info.n_head} query / ${info.n_head_kv} KV heads` : `${info.n_head} heads`;
    if (info.head_dim) heads += ` × ${info.head_dim}`;
  }
  const rows = [
    ['Model', info.id && info.id !== info.name ? `${info.name} (${info.id})` : info.name],
    ['Architecture', join(info.architecture, info.n_layer && `${info.n_layer} layers`)],
    ['Attention', join(info.attention === 'HYBRID' ? 'hybrid: GQA + linear attention' : info.attention, heads)],
    ['Context', info.n_ctx && `${info.n_ctx} tokens per slot`],
    ['Device', info.device],
  ];
  const dl = document.getElementById('facts');
  dl.replaceChildren();
  for (const [k, v] of rows) {
    if (v === undefined || v === null || v === '') continue;
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    dl.append(dt, dd);
  }
}

// With a projector: what an image costs in tokens and KV bytes (vkllm info --mmproj's sizes).
function showImageCost(info) {
  const el = document.getElementById('kv-images');
  const images = info.projector && info.projector.images;
  el.hidden = !images || !images.length;
  if (el.hidden) return;
  el.textContent = 'Images: ' + images.map(i => `${i.width}×${i.height} takes ${i.tokens} tokens, ${bytes(i.kv_bytes)}`).join('; ') + '.';
}

// The KV-cache panel: bytes per token and at 4K/32K/128K tokens for each attention kind of the
// model's dimensions, the model's own row marked, bars on a log scale (the kinds differ by 10-100x).
function showKv(info) {
  const note = document.getElementById('kv-note');
  const table = document.getElementById('kv-table');
  const sub = document.getElementById('kv-sub');
  info.kv = info.kv || {};
  const rows = KINDS.filter(k => info.kv[k] !== undefined);
  if (!rows.length) {
    note.textContent = info.kv.model !== undefined
      ? `This model keeps ${bytes(info.kv.model)} per token.`
      : 'This server does not report the model\u2019s dimensions (no /v1/info), so there is nothing to compare.';
    table.hidden = true;
    return;
  }
  const dims = [];
  if (info.n_layer) dims.push(`${info.n_layer} layers`);
  if (info.n_head) dims.push(`${info.n_head} heads`);
  if (info.head_dim) dims.push(`d ${info.head_dim}`);
  sub.textContent = dims.join(' · ');
  const d = info.dims || {};
  const how = [];
  if (d.gqa_n_head_kv) how.push(`GQA ${d.gqa_n_head_kv} KV heads`);
  if (d.mla_kv_lora_rank) how.push(`MLA latent ${d.mla_kv_lora_rank} + ${d.mla_rope_dim}`);
  if (d.hybrid_attention_layers !== undefined) how.push(`hybrid ${d.hybrid_attention_layers} of ${info.n_layer} layers with attention`);
  if (info.kv_type) how.push(info.kv_type);
  note.textContent = `One sequence, each attention kind at this model\u2019s size${how.length ? `: ${how.join(', ')}` : ''}.`;
  showImageCost(info);
  const linear = document.getElementById('kv-linear');
  linear.hidden = !info.state;
  linear.textContent = info.state ? `linear attention: constant ${bytes(info.state)} per sequence` : '';
  // A hybrid keeps a constant state per sequence beside the KV of its attention layers.
  const fixed = k => (k === 'HYBRID' ? d.hybrid_bytes_per_sequence || 0 : 0);
  const max = Math.max(...rows.map(k => info.kv[k]));
  const min = Math.min(...rows.map(k => info.kv[k]));
  const body = document.getElementById('kv-body');
  body.replaceChildren();
  for (const k of rows) {
    const per = info.kv[k];
    const mine = k === info.attention;
    const tr = document.createElement('tr');
    tr.className = mine ? 'mine' : '';
    tr.dataset.kind = k;
    const name = document.createElement('td');
    const kind = document.createElement('span');
    kind.className = 'kv-kind';
    kind.textContent = k === 'HYBRID' ? 'Hybrid' : k;
    if (mine) {
      const badge = document.createElement('span');
      badge.className = 'badge';
      badge.textContent = 'this model';
      kind.append(badge);
    }
    name.append(kind);
    tr.append(name);
    for (const v of [per, ...CONTEXTS.map(([, n]) => per * n + fixed(k))]) {
      const td = document.createElement('td');
      td.textContent = bytes(v);
      tr.append(td);
    }
    const bar = document.createElement('tr');
    bar.className = `bar${mine ? ' mine' : ''}`;
    const td = document.createElement('td');
    td.colSpan = 5;
    const track = document.createElement('div');
    track.className = 'kv-bar';
    const fill = document.createElement('span');
    const span = Math.log(max / min) || 1;
    fill.style.width = `${max === min ? 100 : 12 + 88 * Math.log(per / min) / span}%`;
    track.append(fill);
    td.append(track);
    bar.append(td);
    body.append(tr, bar);
  }
  table.hidden = false;
}
