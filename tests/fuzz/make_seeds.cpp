// Writes a seed corpus for fuzz_gguf: small fixture models of every architecture, MLA layout and
// tokenizer kind, and a vocab-only file. Usage: fuzz_gguf_seeds DIR
#include <cstdio>
#include <string>

#include "arch/model_config.h"
#include "fixture/fixture.h"
#include "gguf/writer.h"

int main(int argc, char** argv) {
  using namespace vkllm;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  FixtureSpec base;
  base.dim = 32, base.n_layers = 1, base.n_heads = 2, base.n_kv_heads = 1, base.hidden_dim = 32, base.vocab_size = 300;
  FixtureSpec qwen = base, mla = base, fused = base, bpe = base;
  qwen.arch = "qwen2", qwen.weight_type = DType::Q8_0;
  mla.arch = "deepseek2", mla.q_lora_rank = 8, mla.weight_type = DType::Q4_0;
  fused.arch = "deepseek2", fused.mla_layout = MlaLayout::Fused;
  bpe.tokenizer = "gpt2", bpe.tokenizer_pre = "llama-bpe", bpe.rope_freqs = true, bpe.tied_embeddings = true;
  int n = 0;
  for (const FixtureSpec& s : {base, qwen, mla, fused, bpe})
    fixture_writer(s).save(dir + "/seed" + std::to_string(n++) + ".gguf");
  GgufWriter vocab;
  write_vocab(vocab, fixture_vocab("gpt2", 300, "qwen2"));
  vocab.save(dir + "/vocab.gguf");
  return 0;
}
