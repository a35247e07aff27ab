// Anthropic's official SDK (@anthropic-ai/sdk) against a running `vkllm serve --api-key sekret`
// (test_serve_anthropic.cpp runs this): messages.create, the same request through the SDK's
// stream helper (its assembled text and finalMessage), countTokens, a forced tool call, streamed
// too, with its result sent back for an answer, and the SDK's typed errors for a bad request and
// a wrong key. Prints what came back as one JSON line; the C++ test checks it.
// Usage: node tests/anthropic_client.mjs NPM_DIR PORT, where NPM_DIR holds
// node_modules/@anthropic-ai/sdk (scripts/test installs it; test-only).
import path from 'node:path';
import { createRequire } from 'node:module';

const [npmDir, port] = process.argv.slice(2);
const sdk = createRequire(path.resolve(npmDir, 'package.json'))('@anthropic-ai/sdk');
const Anthropic = sdk.default ?? sdk;
const baseURL = `http://127.0.0.1:${port}`;
const client = new Anthropic({ baseURL, apiKey: 'sekret', maxRetries: 0 });

const question = { role: 'user', content: 'And God said' };
const request = { model: 'vkllm', max_tokens: 8, temperature: 0, messages: [question] };
const textOf = (message) => message.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
const weather = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
};

async function send(out) {
  const m = await client.messages.create(request);
  out.create = { type: m.type, text: textOf(m), stop_reason: m.stop_reason, usage: m.usage };
  let text = '';
  const stream = client.messages.stream(request).on('text', (t) => { text += t; });
  const final = await stream.finalMessage();
  out.stream = { text, final_text: textOf(final), output_tokens: final.usage.output_tokens };
  const count = await client.messages.countTokens({ model: 'vkllm', messages: [question], tools: [weather] });
  out.count = count.input_tokens;
}

// tool_choice any: the call is constrained to the tool's schema, so even this model makes one.
async function tool(out) {
  const ask = { role: 'user', content: 'What is the weather in Jerusalem?' };
  const call = { model: 'vkllm', max_tokens: 400, temperature: 0, tools: [weather], messages: [ask] };
  const m = await client.messages.create({ ...call, tool_choice: { type: 'any' } });
  const use = m.content.find((b) => b.type === 'tool_use');
  const streamed = await client.messages.stream({ ...call, tool_choice: { type: 'any' } }).finalMessage();
  const again = streamed.content.find((b) => b.type === 'tool_use');
  const answer = await client.messages.create({
    ...call, max_tokens: 16, tool_choice: { type: 'auto' },
    messages: [ask, { role: 'assistant', content: m.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use?.id, content: '21 degrees, clear' }] }],
  });
  out.tool = { stop_reason: m.stop_reason, name: use?.name, input: use?.input, streamed_input: again?.input,
    answer_stop: answer.stop_reason };
}

function describe(e) {
  for (const k of ['BadRequestError', 'AuthenticationError', 'NotFoundError', 'InternalServerError'])
    if (e instanceof Anthropic[k]) return `${k} ${e.status} ${e.error?.error?.type}`;
  return `untyped ${e}`;
}

async function errors(out) {
  out.errors = {};
  try {
    await client.messages.create({ ...request, messages: [] });
  } catch (e) { out.errors.bad_request = describe(e); }
  try {
    await new Anthropic({ baseURL, apiKey: 'wrong', maxRetries: 0 }).messages.create(request);
  } catch (e) { out.errors.auth = describe(e); }
}

const out = {};
await send(out);
await tool(out);
await errors(out);
console.log('\n' + JSON.stringify(out));
