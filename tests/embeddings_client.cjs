// The official `openai` npm SDK's embeddings.create, and ollama-js's embed when it is installed,
// against a running `vkllm serve` (test_serve_embeddings.cpp runs this); prints what it measured
// as one JSON line. Usage: node tests/embeddings_client.cjs NPM_DIR PORT
const { createRequire } = require('module');
const path = require('path');

const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const cosine = (a, b) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
const maxDiff = (a, b) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));
const fromBase64 = (s) => {
  const bytes = Buffer.from(s, 'base64');
  return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
};

async function main() {
  const [npmDir, port] = process.argv.slice(2);
  const load = createRequire(path.join(path.resolve(npmDir), 'package.json'));
  const OpenAI = load('openai');
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'not-needed', maxRetries: 0 });
  const texts = ['In the beginning', 'In the beginning', 'a quite different sentence about ships'];
  const floats = (await client.embeddings.create({ model: 'm', input: texts, encoding_format: 'float' })).data.map((d) => d.embedding);
  const b64 = await client.embeddings.create({ model: 'm', input: texts[0], encoding_format: 'base64' });
  const sdkDefault = await client.embeddings.create({ model: 'm', input: texts[2] });  // the SDK asks for base64 and decodes it
  let single = 0;
  for (let i = 0; i < texts.length; i++) {
    const one = await client.embeddings.create({ model: 'm', input: texts[i], encoding_format: 'float' });
    single = Math.max(single, maxDiff(one.data[0].embedding, floats[i]));
  }
  const small = (await client.embeddings.create({ model: 'm', input: texts[0], dimensions: 8, encoding_format: 'float' })).data[0].embedding;
  const out = {
    count: floats.length,
    width: floats[0].length,
    cos_same: cosine(floats[0], floats[1]),
    cos_different: cosine(floats[0], floats[2]),
    norm: Math.sqrt(dot(floats[2], floats[2])),
    base64_diff: maxDiff(fromBase64(b64.data[0].embedding), floats[0]),
    sdk_default_diff: maxDiff(sdkDefault.data[0].embedding, floats[2]),
    batch_vs_single: single,
    dims_length: small.length,
    dims_norm: Math.sqrt(dot(small, small)),
    ollama: null,
  };
  try {
    const { Ollama } = load('ollama');
    const ollama = new Ollama({ host: `http://127.0.0.1:${port}` });
    const r = await ollama.embed({ model: 'm', input: texts });
    out.ollama = { count: r.embeddings.length, diff: maxDiff(r.embeddings[2], floats[2]), prompt_eval_count: r.prompt_eval_count };
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e;
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(`embeddings client: ${e.message}`);
  process.exit(1);
});
