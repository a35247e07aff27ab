// Ollama's own JavaScript client (ollama-js) against a running `vkllm serve` (test_serve_ollama.cpp
// runs this): list, show, ps, version, chat without and with streaming, generate (raw, and through
// the chat template whole and streamed), a JSON-schema
// `format`, and a typed error for a model that is not served. Prints what came back as one JSON
// line; the C++ test checks it. Usage: node tests/ollama_client.cjs NPM_DIR PORT MODEL, where
// NPM_DIR holds node_modules/ollama (scripts/test installs it; test-only).
const path = require('node:path');

const [npmDir, port, model] = process.argv.slice(2);
const { Ollama } = require(path.resolve(npmDir, 'node_modules', 'ollama'));
const ollama = new Ollama({ host: `http://127.0.0.1:${port}` });
const options = { temperature: 0, num_predict: 12, seed: 7 };
const question = [{ role: 'user', content: 'Who begat Enos?' }];
const schema = {
  type: 'object',
  properties: { book: { type: 'string', maxLength: 12 }, chapter: { type: 'integer', minimum: 1, maximum: 150 } },
  required: ['book', 'chapter'],
  additionalProperties: false,
};

async function main() {
  const out = {};
  const list = await ollama.list();
  out.models = list.models.map((m) => ({ name: m.name, size: m.size, family: m.details.family }));
  const show = await ollama.show({ model });
  out.show = { capabilities: show.capabilities, architecture: show.model_info['general.architecture'] };
  out.ps = (await ollama.ps()).models.map((m) => ({ name: m.name, context_length: m.context_length }));
  out.version = (await ollama.version()).version;

  const chat = await ollama.chat({ model, messages: question, options });
  out.chat = {
    content: chat.message.content,
    done: chat.done,
    done_reason: chat.done_reason,
    eval_count: chat.eval_count,
    prompt_eval_count: chat.prompt_eval_count,
    total_duration: chat.total_duration,
  };

  const parts = [];
  let last = null;
  for await (const part of await ollama.chat({ model, messages: question, options, stream: true })) {
    parts.push(part.message.content);
    last = part;
  }
  out.chat_stream = { content: parts.join(''), parts: parts.length, done: last.done, eval_count: last.eval_count };

  const gen = await ollama.generate({ model, prompt: 'In the beginning', options, raw: true });
  out.generate = { response: gen.response, done_reason: gen.done_reason, eval_count: gen.eval_count };
  // Without raw the prompt goes through the chat template, and the text still comes as `response`.
  const templated = await ollama.generate({ model, prompt: 'Who begat Enos?', options });
  const pieces = [];
  let end = null;
  for await (const part of await ollama.generate({ model, prompt: 'Who begat Enos?', options, stream: true })) {
    pieces.push(part.response);
    end = part;
  }
  out.generate_templated = {
    response: templated.response,
    context: Array.isArray(templated.context) ? templated.context.length : -1,
    streamed: pieces.join(''),
    parts: pieces.length,
    done: end.done,
    eval_count: end.eval_count,
  };

  const formatted = await ollama.chat({
    model,
    messages: question,
    format: schema,
    options: { temperature: 0, num_predict: 96 },
  });
  out.format = { content: formatted.message.content, done_reason: formatted.done_reason };

  try {
    await ollama.chat({ model: 'llama3:8b', messages: question });
    out.missing = 'no error';
  } catch (e) {
    out.missing = { name: e.name, status: e.status_code, message: e.error ?? e.message };
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.log(JSON.stringify({ failed: String(e && e.stack ? e.stack : e) }));
  process.exit(1);
});
