// Agents' clients against a running `vkllm serve` (test_serve_agents.cpp runs this): the official
// `openai` SDK's tool loop (tool_choice required, the tool's result sent back, a final answer),
// the same call streamed and reassembled from its deltas, response_format json_schema (strict)
// with the schemas given, and Vercel's `ai` with `@ai-sdk/openai-compatible` running generateText
// with a tool over several steps. Prints what came back as one JSON line; the C++ test checks it
// (arguments and contents against the schemas, with its own validator).
// Usage: node tests/agent_clients.mjs NPM_DIR PORT SCHEMAS_JSON [openai], where NPM_DIR holds
// node_modules/{openai,ai,@ai-sdk/openai-compatible} (scripts/test installs them; test-only).
// SCHEMAS_JSON "-": no schemas; "openai" last: the openai SDK's loop alone.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import fs from 'node:fs';

const [npmDir, port, schemasFile, only] = process.argv.slice(2);
const nodeModules = path.resolve(npmDir, 'node_modules');
// ESM packages are imported by their entry file (there is no package.json here to resolve from).
async function load(name) {
  const require = createRequire(path.join(nodeModules, 'package.json'));
  const pkg = JSON.parse(fs.readFileSync(path.join(nodeModules, name, 'package.json'), 'utf8'));
  const entry = pkg.exports?.['.']?.import ?? pkg.exports?.['.']?.default ?? pkg.module ?? pkg.main;
  try {
    return await import(pathToFileURL(path.join(nodeModules, name, typeof entry === 'string' ? entry : entry.default)));
  } catch {
    return require(name);
  }
}

const weather = {
  type: 'object',
  properties: {
    city: { type: 'string', maxLength: 12 },
    unit: { enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
  },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: weather } }];
const question = { role: 'user', content: 'What is the weather in Jerusalem?' };
const sampling = { temperature: 0, seed: 7, max_tokens: 400 };

async function openaiLoop(OpenAI, out) {
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0 });
  const first = await client.chat.completions.create({
    model: 'default', messages: [question], tools, tool_choice: 'required', ...sampling });
  const message = first.choices[0].message;
  out.openai = { finish: first.choices[0].finish_reason, calls: message.tool_calls ?? [], content: message.content };
  // The tool's result goes back as a tool message; the model answers in text.
  const messages = [question, message];
  for (const call of message.tool_calls ?? [])
    messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ temperature: 21, sky: 'clear' }) });
  const second = await client.chat.completions.create({
    model: 'default', messages, tools, tool_choice: 'auto', temperature: 0, seed: 7, max_tokens: 24 });
  out.openai.final = second.choices[0].message.content;
  out.openai.final_finish = second.choices[0].finish_reason;

  // The same request streamed: the deltas reassemble to the same call.
  const stream = await client.chat.completions.create({
    model: 'default', messages: [question], tools, tool_choice: 'required', ...sampling, stream: true });
  const calls = [];
  let finish = null;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    for (const d of choice.delta?.tool_calls ?? []) {
      calls[d.index] ??= { id: d.id, name: '', arguments: '' };
      if (d.function?.name) calls[d.index].name += d.function.name;
      calls[d.index].arguments += d.function?.arguments ?? '';
    }
    finish = choice.finish_reason ?? finish;
  }
  out.openai_stream = { calls, finish };

  out.schemas = [];
  for (const schema of schemasFile === '-' ? [] : JSON.parse(fs.readFileSync(schemasFile, 'utf8'))) {
    const r = await client.chat.completions.create({
      model: 'default',
      messages: [{ role: 'user', content: 'Answer in JSON.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema } },
      temperature: 0.7, seed: 3, max_tokens: 1000,
    });
    out.schemas.push({ content: r.choices[0].message.content, finish: r.choices[0].finish_reason });
  }
}

async function aiLoop(ai, compatible, out) {
  const provider = compatible.createOpenAICompatible({ name: 'vkllm', baseURL: `http://127.0.0.1:${port}/v1` });
  const executed = [];
  const stop = ai.stepCountIs ?? ai.isStepCount;
  const result = await ai.generateText({
    model: provider('default'),
    prompt: 'What is the weather in Jerusalem?',
    tools: {
      get_weather: ai.tool({
        description: 'Weather of a city',
        inputSchema: ai.jsonSchema(weather),
        parameters: ai.jsonSchema(weather),  // the name before ai 5
        execute: async (input) => {
          executed.push(input);
          return { temperature: 21, sky: 'clear' };
        },
      }),
    },
    toolChoice: 'required',
    prepareStep: ({ stepNumber }) => (stepNumber === 0 ? { toolChoice: 'required' } : { toolChoice: 'auto' }),
    maxSteps: 3,  // before ai 5
    stopWhen: stop ? stop(3) : undefined,
    temperature: 0,
    seed: 7,
    maxOutputTokens: 200,  // each step's: the call needs about 100 of this model's tokens
  });
  out.ai = {
    steps: result.steps.length,
    calls: result.steps.flatMap((s) => s.toolCalls.map((c) => ({ name: c.toolName, input: c.input ?? c.args }))),
    executed,
    text: result.text,
    finish: result.finishReason,
  };
}

async function main() {
  const out = {};
  const openai = await load('openai');
  await openaiLoop(openai.default ?? openai.OpenAI ?? openai, out);
  if (only === 'openai') return console.log(JSON.stringify(out));
  const ai = await load('ai');
  const compatible = await load('@ai-sdk/openai-compatible');
  await aiLoop(ai, compatible, out);
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(`agent clients: ${e.stack ?? e.message}`);
  process.exit(1);
});
