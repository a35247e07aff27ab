// Talking to vkllm serve: JSON requests with the API key when one is set, errors as ApiError
// (the server's OpenAI-shaped message, or "cannot reach the server"), and server-sent events.

export class ApiError extends Error {
  constructor(message, status = 0, type = '') {
    super(message);
    this.status = status;  // 0: the server could not be reached
    this.type = type;
  }
}

let apiKey = sessionStorage.getItem('vkllm-api-key') || '';

export function setApiKey(key) {
  apiKey = key;
  sessionStorage.setItem('vkllm-api-key', key);
}

function headers(json) {
  const h = {};
  if (json) h['Content-Type'] = 'application/json';
  if (apiKey) h.Authorization = `Bearer ${apiKey}`;
  return h;
}

async function send(method, path, body, signal) {
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError('Cannot reach the server. Is vkllm serve still running?', 0, 'network');
  }
  if (!res.ok) throw await errorOf(res);
  return res;
}

async function errorOf(res) {
  let message = `HTTP ${res.status}`;
  let type = '';
  try {
    const j = await res.json();
    if (j && j.error) {
      message = j.error.message || message;
      type = j.error.type || '';
    }
  } catch (_) { /* not JSON: keep the status */ }
  return new ApiError(message, res.status, type);
}

export async function getJson(path, signal) {
  return (await send('GET', path, undefined, signal)).json();
}

export async function postJson(path, body, signal) {
  return (await send('POST', path, body, signal)).json();
}

// POSTs with "stream": true and calls onEvent(json) for each `data:` event until [DONE].
export async function postStream(path, body, onEvent, signal) {
  const res = await send('POST', path, { ...body, stream: true }, signal);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return;
        const j = JSON.parse(data);
        if (j.error) throw new ApiError(j.error.message || 'the server stopped the stream', j.error.code || 500, j.error.type);
        onEvent(j);
      }
    }
  }
  throw new ApiError('The stream ended early: the server may have stopped.', 0, 'network');
}
