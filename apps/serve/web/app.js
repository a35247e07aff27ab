// The demo page: a chat streamed from /v1/chat/completions, the model's facts from /v1/info, the
// server's health, errors in a banner (never a blank page), and the attention view.
import { postStream, setApiKey, ApiError } from './api.js';
import { loadInfo, showInfo, bytes } from './model_info.js';
import { AttentionView } from './attention.js';
import { wireImages, takeAttached, withSmallImages, firstImage } from './images.js';

const $ = id => document.getElementById(id);
const EXAMPLE = 'In the beginning God created the heaven and the earth.';

const state = {
  info: {},
  messages: [],     // {role, content} of the conversation, sent with each request
  running: null,    // the AbortController of the reply being streamed
  online: null,
};

// ---- errors -------------------------------------------------------------------------------

function showError(title, detail = '', needsKey = false) {
  $('banner-title').textContent = title;
  $('banner-detail').textContent = detail;
  $('banner-key').hidden = !needsKey;
  $('banner').hidden = false;
}

function hideError() {
  $('banner').hidden = true;
}

function reportError(e) {
  if (e.name === 'AbortError') return;
  if (e instanceof ApiError && e.status >= 400) setOnline(true);  // it answered
  if (e instanceof ApiError && e.status === 401) showError('This server needs an API key.', e.message, true);
  else if (e instanceof ApiError && e.status === 0) { setOnline(false); showError('Server unreachable.', e.message); }
  else if (e instanceof ApiError) showError(`Request rejected (${e.status}).`, e.message);
  else showError('Something went wrong.', String(e && e.message ? e.message : e));
}

window.addEventListener('error', e => showError('Page error.', e.message));
window.addEventListener('unhandledrejection', e => reportError(e.reason || new Error('unknown')));

// ---- the server: health and model facts ------------------------------------------------------

function setOnline(ok) {
  const s = $('status');
  s.classList.toggle('ok', ok);
  s.classList.toggle('down', !ok);
  s.querySelector('.status-text').textContent = ok ? 'connected' : 'offline';
  s.title = ok ? 'The server answers' : 'The server does not answer';
  state.online = ok;
}

async function refreshInfo() {
  try {
    state.info = await loadInfo();
    showInfo(state.info);
    setOnline(true);
    if (!$('banner-title').textContent.startsWith('Request')) hideError();
  } catch (e) {
    reportError(e);
  }
}

// Every 5 s while idle: notices a server that went away, and one that came back.
async function poll() {
  if (state.running) return;
  try {
    const res = await fetch('/health', { cache: 'no-store' });
    const was = state.online;
    setOnline(res.ok);
    if (res.ok && was === false) refreshInfo();
  } catch (_) {
    if (state.online !== false) showError('Server unreachable.', 'Cannot reach the server. Is vkllm serve still running?');
    setOnline(false);
  }
}

// ---- settings ---------------------------------------------------------------------------------

function number(id, lo, hi, integer) {
  const el = $(id);
  if (el.value.trim() === '') return undefined;
  let v = Number(el.value);
  if (!Number.isFinite(v)) return undefined;
  if (integer) v = Math.round(v);
  return Math.min(hi, Math.max(lo, v));
}

function sampling() {
  const s = {
    temperature: number('temperature', 0, 2, false) ?? 0.8,
    top_p: number('top-p', 0, 1, false) ?? 0.95,
    max_tokens: number('max-tokens', 1, 100000, true) ?? 96,
  };
  const seed = number('seed', -(2 ** 53), 2 ** 53, true);
  if (seed !== undefined) s.seed = seed;
  return s;
}

// ---- chat ---------------------------------------------------------------------------------------

function scrollDown() {
  const m = $('messages');
  m.scrollTop = m.scrollHeight;
}

function addMessage(role, text, image = null) {
  $('empty').hidden = true;
  const msg = document.createElement('div');
  msg.className = `msg msg-${role}`;
  if (image) {
    const img = document.createElement('img');
    img.className = 'msg-image';
    img.src = image;
    img.alt = 'The image sent with this message';
    msg.append(img);
  }
  const bubble = document.createElement('div');
  bubble.className = 'bubble';
  bubble.textContent = text;
  if (role === 'assistant') bubble.dataset.testid = 'reply';
  const meta = document.createElement('div');
  meta.className = 'meta';
  msg.append(bubble, meta);
  $('messages').append(msg);
  scrollDown();
  return { bubble, meta };
}

function setRunning(controller) {
  state.running = controller;
  $('send').hidden = !!controller;
  $('stop').hidden = !controller;
}

function speedText(tokens, seconds) {
  return seconds > 0 && tokens > 1 ? `${(tokens / seconds).toFixed(1)} tokens/s` : '';
}

async function send(text) {
  if (state.running || !text.trim()) return;
  hideError();
  const image = takeAttached();
  const content = image ? [{ type: 'image_url', image_url: { url: image.url } }, { type: 'text', text }] : text;
  state.messages.push({ role: 'user', content });
  addMessage('user', text, image && image.url);
  const { bubble, meta } = addMessage('assistant', '');
  bubble.classList.add('waiting');
  const controller = new AbortController();
  setRunning(controller);
  const t0 = performance.now();
  let first = 0, tokens = 0, reply = '', finish = '', usage = null;
  const onEvent = e => {
    if (e.usage) usage = e.usage;
    const c = e.choices && e.choices[0];
    if (!c) return;
    if (c.finish_reason) finish = c.finish_reason;
    const piece = c.delta && c.delta.content;
    if (!piece) return;
    if (!first) { first = performance.now(); bubble.classList.replace('waiting', 'streaming'); }
    tokens++;
    reply += piece;
    bubble.textContent = reply;
    $('speed').textContent = speedText(tokens - 1, (performance.now() - first) / 1000);
    scrollDown();
  };
  try {
    await postStream('/v1/chat/completions', { messages: state.messages, ...sampling(), stream_options: { include_usage: true } },
      onEvent, controller.signal);
  } catch (e) {
    if (e.name === 'AbortError') finish = 'stopped';
    else { finish = 'error'; reportError(e); }
  }
  bubble.classList.remove('waiting', 'streaming');
  const end = performance.now();
  if (usage) tokens = usage.completion_tokens;
  const parts = [];
  if (tokens) parts.push(`${tokens} tokens`);
  // tokens/s counts from the first token: the time before it is the prompt's (shown apart).
  const speed = first ? speedText(tokens - 1, (end - first) / 1000) : '';
  if (speed) parts.push(speed);
  if (first) parts.push(`first token ${Math.round(first - t0)} ms`);
  if (finish === 'length') parts.push('max tokens reached');
  // What the conversation holds in the KV cache now, an image's tokens included.
  if (usage && state.info.kv && state.info.kv.model) {
    const n = usage.prompt_tokens + usage.completion_tokens;
    parts.push(`${n} tokens in the KV cache (${bytes(n * state.info.kv.model)})`);
  }
  meta.textContent = parts.join(' · ');
  if (finish === 'stopped') {
    const s = document.createElement('span');
    s.className = 'stopped';
    s.textContent = 'stopped';
    meta.append(s);
  }
  if (!reply) {
    bubble.classList.add('failed');
    bubble.textContent = { error: 'No reply: see the message above.', stopped: 'Stopped before the first token.' }[finish] ||
      'The model ended its reply at once.';
  }
  if (reply) {
    state.messages.push({ role: 'assistant', content: reply });
    for (const b of $('messages').querySelectorAll('.meta button')) b.remove();  // it shows the last exchange
    const look = document.createElement('button');
    look.type = 'button';
    look.textContent = 'see attention';
    look.addEventListener('click', () => attention.open());
    meta.append(look);
  } else {
    state.messages.pop();  // the question stays on screen but is not sent again without its answer
  }
  $('speed').textContent = speed ? `last reply: ${speed}` : '';
  setRunning(null);
}

function newConversation() {
  if (state.running) state.running.abort();
  state.messages = [];
  for (const m of [...$('messages').querySelectorAll('.msg')]) m.remove();
  $('empty').hidden = false;
  $('speed').textContent = '';
  hideError();
  $('prompt').focus();
}

// What the attention view looks at: the last exchange of the conversation, or else the text in
// the box (or an example sentence).
function attentionSource() {
  const m = state.messages;
  if (m.length >= 2 && m[m.length - 1].role === 'assistant') {
    const last = m.slice(-2).map(x => ({ ...x, content: withSmallImages(x.content) }));
    const image = firstImage(last);
    return { body: { messages: last }, image,
      label: `The last exchange (your message${image ? ', its image at most 224 pixels a side,' : ''} and the reply), as the model saw it` };
  }
  const text = $('prompt').value.trim() || EXAMPLE;
  return { body: { prompt: text }, image: null, label: `“${text}”` };
}

const attention = new AttentionView(attentionSource, () => state.info, reportError);

// ---- wiring ----------------------------------------------------------------------------------

function grow() {
  const p = $('prompt');
  p.style.height = 'auto';
  p.style.height = `${Math.min(p.scrollHeight, 180)}px`;
}

function submit() {
  const p = $('prompt');
  const text = p.value;
  if (!text.trim() || state.running) return;
  p.value = '';
  grow();
  send(text);
}

$('composer').addEventListener('submit', e => { e.preventDefault(); submit(); });
$('prompt').addEventListener('keydown', e => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); submit(); }
});
$('prompt').addEventListener('input', grow);
$('stop').addEventListener('click', () => state.running && state.running.abort());
$('new-chat').addEventListener('click', newConversation);
$('attention-open').addEventListener('click', () => attention.open());
wireImages(reportError);
$('banner-close').addEventListener('click', hideError);
$('banner-key').addEventListener('submit', e => {
  e.preventDefault();
  setApiKey($('api-key').value.trim());
  hideError();
  refreshInfo();
});
for (const chip of $('suggestions').querySelectorAll('.chip'))
  chip.addEventListener('click', () => { $('prompt').value = chip.textContent; grow(); $('prompt').focus(); });

refreshInfo();
setInterval(poll, 5000);
$('prompt').focus();
