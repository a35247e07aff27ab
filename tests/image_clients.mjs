// The three official clients send an image to a running `vkllm serve --mmproj` (test_serve_image.cpp
// runs this): the openai SDK as an image_url content part (a data: URL), ollama-js as a message's
// `images` (base64), @anthropic-ai/sdk as an image block (base64 source). Prints each reply's text
// and prompt token count as one JSON line; the C++ test checks it.
// Usage: node tests/image_clients.mjs NPM_DIR PORT PNG_FILE, where NPM_DIR holds node_modules with
// openai, ollama and @anthropic-ai/sdk (scripts/test installs them; test-only).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [npmDir, port, png] = process.argv.slice(2);
const load = createRequire(path.resolve(npmDir, 'package.json'));
const OpenAI = load('openai');
const { Ollama } = load('ollama');
const anthropicSdk = load('@anthropic-ai/sdk');
const Anthropic = anthropicSdk.default ?? anthropicSdk;
const b64 = fs.readFileSync(png).toString('base64');
const question = 'What is in it?';

async function main() {
  const out = {};
  const openai = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'none', maxRetries: 0 });
  const model = (await openai.models.list()).data[0].id;
  const chat = await openai.chat.completions.create({
    model, max_tokens: 4, temperature: 0,
    messages: [{ role: 'user', content: [
      { type: 'image_url', image_url: { url: `data:image/png;base64,${b64}` } },
      { type: 'text', text: question }] }],
  });
  out.openai = { text: chat.choices[0].message.content, prompt_tokens: chat.usage.prompt_tokens };

  const ollama = new Ollama({ host: `http://127.0.0.1:${port}` });
  const o = await ollama.chat({ model, messages: [{ role: 'user', content: question, images: [b64] }],
    options: { temperature: 0, num_predict: 4 } });
  out.ollama = { text: o.message.content, prompt_tokens: o.prompt_eval_count };

  const anthropic = new Anthropic({ baseURL: `http://127.0.0.1:${port}`, apiKey: 'none', maxRetries: 0 });
  const a = await anthropic.messages.create({ model, max_tokens: 4, temperature: 0,
    messages: [{ role: 'user', content: [
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64 } },
      { type: 'text', text: question }] }] });
  out.anthropic = { text: a.content.filter((b) => b.type === 'text').map((b) => b.text).join(''),
    prompt_tokens: a.usage.input_tokens + (a.usage.cache_read_input_tokens ?? 0) };
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(`image clients: ${e.message}`);
  process.exit(1);
});
