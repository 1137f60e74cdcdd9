// Speed of reading a GGUF header (issue 25 target: a 150k-token vocabulary well under 100 ms):
// tokens, scores, token types and 150k merges, plus 36 layers of tensor infos, read from a file.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "../tests/gguf_writer.h"
#include "headroom/gguf_model.h"

using namespace gguf_test;

namespace {

std::string vocab_file() {
  static const std::string path = [] {
    const int n = 150000;
    std::string toks, scores, types, merges;
    for (int i = 0; i < n; ++i) {
      toks += str("tok_" + std::to_string(i));
      scores += f32(static_cast<float>(-i));
      types += i32(1);
      merges += str("t" + std::to_string(i) + " k" + std::to_string(i));
    }
    Writer w;
    w.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 36).kv_u32("llama.embedding_length", 4096)
        .kv_u32("llama.attention.head_count", 32).kv_u32("llama.attention.head_count_kv", 8).kv_u32("llama.context_length", 40960)
        .kv_arr("tokenizer.ggml.tokens", STRING, n, toks).kv_arr("tokenizer.ggml.scores", F32, n, scores)
        .kv_arr("tokenizer.ggml.token_type", I32, n, types).kv_arr("tokenizer.ggml.merges", STRING, n, merges);
    w.tensor("token_embd.weight", {4096, n}, T_Q8_0, uint64_t{4096} * n / 32 * 34);
    for (int l = 0; l < 36; ++l)
      for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"})
        w.tensor("blk." + std::to_string(l) + "." + t + ".weight", {4096, 4096}, T_Q4_K, uint64_t{4096} * 4096 / 256 * 144);
    std::string p = (std::filesystem::temp_directory_path() / "headroom_bench_vocab.gguf").string();
    w.write(p);
    return p;
  }();
  return path;
}

void BM_GgufHeader150kVocab(benchmark::State& state) {
  const std::string p = vocab_file();
  for (auto _ : state) benchmark::DoNotOptimize(headroom::gguf::read_model_summary(p));
}
BENCHMARK(BM_GgufHeader150kVocab)->Unit(benchmark::kMillisecond);

}  // namespace
