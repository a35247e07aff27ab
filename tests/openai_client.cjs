// The official `openai` npm SDK against a running `vkllm serve` (test_serve.cpp runs this): lists
// the models, streams a chat completion and a completion, and prints what it got as one JSON line.
// Usage: node tests/openai_client.cjs NPM_DIR PORT, where NPM_DIR holds node_modules/openai
// (scripts/test installs it into build/npm; it is a test-only dependency).
const { createRequire } = require('module');
const path = require('path');

async function main() {
  const [npmDir, port] = process.argv.slice(2);
  const OpenAI = createRequire(path.join(path.resolve(npmDir), 'package.json'))('openai');
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'not-needed', maxRetries: 0 });
  const models = [];
  for await (const m of client.models.list()) models.push(m.id);
  const out = { models, chat: '', chat_chunks: 0, chat_finish: null, completion: '', usage: null };
  const chat = await client.chat.completions.create({
    model: models[0],
    messages: [{ role: 'user', content: 'Who made the heaven and the earth?' }],
    max_tokens: 8,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const chunk of chat) {
    if (chunk.usage) out.usage = chunk.usage;
    if (!chunk.choices.length) continue;
    out.chat += chunk.choices[0].delta.content ?? '';
    out.chat_chunks += 1;
    if (chunk.choices[0].finish_reason) out.chat_finish = chunk.choices[0].finish_reason;
  }
  const completion = await client.completions.create({ model: models[0], prompt: 'And God said', max_tokens: 6, temperature: 0 });
  out.completion = completion.choices[0].text;
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(`openai client: ${e.message}`);
  process.exit(1);
});
