// A GGUF model's facts and totals (summarize) and `headroom model FILE.gguf`: a two-layer llama
// written by the test, whose parameters and bytes by ggml type are summed here by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "gguf_writer.h"
#include "headroom/error.h"
#include "headroom/gguf_model.h"

using namespace headroom;
using namespace gguf_test;
namespace fs = std::filesystem;

namespace {

struct Cli {
  int rc;
  std::string out;
};
Cli run(const std::string& args) {
  std::string cmd = std::string(HEADROOM_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  return {WEXITSTATUS(st), out};
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("headroom_ggufm_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Two llama layers, embedding 64, 4 heads (head dim 16), 2 KV heads, FFN 128, vocab 100.
//   token_embd  q8_0 [64, 100]  6400 params, 6400/32*34 = 6800 B
//   per layer   q4_0 attn_q [64,64] 4096 -> 2304 B; attn_k, attn_v [64,32] 2048 -> 1152 B each;
//               attn_output [64,64] 2304 B; ffn_gate, ffn_up [64,128], ffn_down [128,64] 8192 -> 4608 B each
//               f32 attn_norm, ffn_norm [64] 256 B each
//   output_norm f32 [64]; output f16 [64, 100] 12800 B
// params 6400 + 2 x 36992 + 64 + 6400 = 86848; bytes q8_0 6800, q4_0 2 x 20736 = 41472,
// f32 2 x 512 + 256 = 1280, f16 12800: 62352.
Writer tiny_llama() {
  Writer w;
  std::string toks;
  for (int i = 0; i < 100; ++i) toks += str("t" + std::to_string(i));
  w.kv_str("general.architecture", "llama")
      .kv_str("general.name", "Tiny Llama")
      .kv_u32("general.file_type", 2)
      .kv_u32("llama.context_length", 4096)
      .kv_u32("llama.embedding_length", 64)
      .kv_u32("llama.block_count", 2)
      .kv_u32("llama.feed_forward_length", 128)
      .kv_u32("llama.attention.head_count", 4)
      .kv_u32("llama.attention.head_count_kv", 2)
      .kv_arr("tokenizer.ggml.tokens", STRING, 100, toks);
  w.tensor("token_embd.weight", {64, 100}, T_Q8_0, 6800);
  for (int l = 0; l < 2; ++l) {
    std::string b = "blk." + std::to_string(l) + ".";
    w.tensor(b + "attn_norm.weight", {64}, T_F32, 256)
        .tensor(b + "attn_q.weight", {64, 64}, T_Q4_0, 2304)
        .tensor(b + "attn_k.weight", {64, 32}, T_Q4_0, 1152)
        .tensor(b + "attn_v.weight", {64, 32}, T_Q4_0, 1152)
        .tensor(b + "attn_output.weight", {64, 64}, T_Q4_0, 2304)
        .tensor(b + "ffn_norm.weight", {64}, T_F32, 256)
        .tensor(b + "ffn_gate.weight", {64, 128}, T_Q4_0, 4608)
        .tensor(b + "ffn_up.weight", {64, 128}, T_Q4_0, 4608)
        .tensor(b + "ffn_down.weight", {128, 64}, T_Q4_0, 4608);
  }
  w.tensor("output_norm.weight", {64}, T_F32, 256).tensor("output.weight", {64, 100}, T_F16, 12800);
  return w;
}

}  // namespace

TEST(GgufModel, TinyLlamaByHand) {
  fs::path d = temp_dir("llama");
  std::string p = (d / "tiny-Q4_0.gguf").string();
  tiny_llama().write(p);
  auto s = gguf::read_model_summary(p);
  EXPECT_EQ(s.architecture, "llama");
  EXPECT_EQ(s.name, "Tiny Llama");
  EXPECT_EQ(s.file_type, "Q4_0");
  EXPECT_EQ(s.context_length, 4096);
  EXPECT_EQ(s.block_count, 2);
  EXPECT_EQ(s.embedding_length, 64);
  EXPECT_EQ(s.feed_forward_length, 128);
  EXPECT_EQ(s.head_count, 4);
  EXPECT_EQ(s.head_count_kv, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(s.key_length, 16);  // n_embd / n_head when attention.key_length is absent
  EXPECT_EQ(s.value_length, 16);
  EXPECT_EQ(s.vocab_size, 100);  // tokenizer.ggml.tokens count
  EXPECT_EQ(s.tensors, 21);
  EXPECT_EQ(s.params_total, 86848);
  EXPECT_EQ(s.params_active, 86848);
  EXPECT_EQ(s.checkpoint_bytes, 62352);
  ASSERT_EQ(s.by_type.size(), 4u);
  EXPECT_EQ(s.by_type[0].type, gguf::GgmlType::Q4_0);
  EXPECT_EQ(s.by_type[0].bytes, 41472);
  EXPECT_EQ(s.by_type[0].tensors, 14);
  EXPECT_EQ(s.by_type[0].params, 2 * (4096 + 2048 * 2 + 4096 + 8192 * 3));
  EXPECT_EQ(s.by_type[1].type, gguf::GgmlType::F16);
  EXPECT_EQ(s.by_type[1].bytes, 12800);
  EXPECT_EQ(s.by_type[2].type, gguf::GgmlType::Q8_0);
  EXPECT_EQ(s.by_type[2].bytes, 6800);
  EXPECT_EQ(s.by_type[3].type, gguf::GgmlType::F32);
  EXPECT_EQ(s.by_type[3].bytes, 1280);
  fs::remove_all(d);
}

TEST(GgufModel, MoeActiveParamsAndPerLayerKvHeads) {
  // 4 experts, 1 used: the three *_exps tensors (3 x 8192 params) count a quarter as active.
  Writer w;
  w.kv_str("general.architecture", "qwen3moe")
      .kv_u32("qwen3moe.block_count", 2)
      .kv_u32("qwen3moe.embedding_length", 64)
      .kv_u32("qwen3moe.attention.head_count", 4)
      .kv_arr("qwen3moe.attention.head_count_kv", U32, 2, u32(2) + u32(0))
      .kv_u32("qwen3moe.attention.key_length", 32)
      .kv_u32("qwen3moe.attention.value_length", 16)
      .kv_u32("qwen3moe.expert_count", 4)
      .kv_u32("qwen3moe.expert_used_count", 1)
      .tensor("token_embd.weight", {64, 10}, T_F32, 2560)
      .tensor("blk.0.ffn_gate_exps.weight", {64, 32, 4}, T_F16, 16384)
      .tensor("blk.0.ffn_up_exps.weight", {64, 32, 4}, T_F16, 16384)
      .tensor("blk.0.ffn_down_exps.weight", {32, 64, 4}, T_F16, 16384);
  auto s = gguf::summarize(gguf::ModelFiles{{gguf::parse_header(w.bytes(), "moe.gguf")}, {}});
  EXPECT_EQ(s.params_total, 640 + 3 * 8192);
  EXPECT_EQ(s.params_active, 640 + 3 * 8192 / 4);
  EXPECT_EQ(s.head_count_kv, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(s.key_length, 32);
  EXPECT_EQ(s.value_length, 16);

  // A per-layer array of the wrong length, and a missing architecture, are refused.
  Writer bad;
  bad.kv_str("general.architecture", "x").kv_u32("x.block_count", 3).kv_arr("x.attention.head_count_kv", U32, 2, u32(1) + u32(1));
  try {
    gguf::summarize(gguf::ModelFiles{{gguf::parse_header(bad.bytes(), "bad.gguf")}, {}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "bad.gguf: x.attention.head_count_kv: array of 2 entries, expected one per layer (3)");
  }
  // A sliding window is said out loud: the per-token figure counts those layers at full size.
  Writer swa;
  swa.kv_str("general.architecture", "gemma3").kv_u32("gemma3.block_count", 1).kv_u32("gemma3.attention.sliding_window", 1024);
  auto sw = gguf::summarize(gguf::ModelFiles{{gguf::parse_header(swa.bytes(), "swa.gguf")}, {}});
  EXPECT_EQ(sw.sliding_window, 1024);
  ASSERT_EQ(sw.notes.size(), 1u);
  EXPECT_NE(sw.notes[0].find("gemma3.attention.sliding_window = 1024"), std::string::npos);

  Writer none;
  none.kv_u32("general.alignment", 32);
  EXPECT_THROW(gguf::summarize(gguf::ModelFiles{{gguf::parse_header(none.bytes(), "n.gguf")}, {}}), InputError);
}

TEST(GgufModelCli, JsonAndTextReport) {
  fs::path d = temp_dir("cli");
  std::string p = (d / "tiny-Q4_0.gguf").string();
  tiny_llama().write(p);
  auto r = run("model " + p + " --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "gguf");
  EXPECT_EQ(j["architecture"], "llama");
  EXPECT_EQ(j["params_total"], 86848);
  EXPECT_EQ(j["params_active"], 86848);
  EXPECT_EQ(j["checkpoint_bytes"], 62352);
  EXPECT_EQ(j["layers"]["total"], 2);
  EXPECT_EQ(j["head_count_kv"], 2);
  EXPECT_EQ(j["context_length"], 4096);
  EXPECT_EQ(j["bytes_by_type"]["q4_0"], 41472);
  EXPECT_EQ(j["bytes_by_type"]["q8_0"], 6800);
  EXPECT_EQ(j["ranks"][0]["weight_bytes"], 62352);
  // f16 K and V: 2 layers x 2 KV heads x (16 + 16) x 2 B = 256 B per token.
  EXPECT_EQ(j["ranks"][0]["kv_bytes_per_token"], 256);
  // llama-server's cache at the model's 4096 context with its default 4 unified slots:
  // 2 layers x 32 (2 KV heads x 16) x 2 B x 4096 cells = 0.5 MiB of K.
  EXPECT_EQ(j["llamacpp_kv"]["cells"], 4096);
  EXPECT_EQ(j["llamacpp_kv"]["n_seq_max"], 4);
  EXPECT_EQ(j["llamacpp_kv"]["k_bytes"], 524288);
  EXPECT_EQ(j["llamacpp_kv"]["log"],
            "llama_kv_cache: size =    1.00 MiB (  4096 cells,   2 layers,  4/1 seqs), K (f16):    0.50 MiB, V (f16):    0.50 MiB");
  // --ctx-size 8192 --parallel 2, q8_0: two streams of 4096 cells, 2 x 34 B x 4096 x 2 = 557056 B of K.
  auto q = run("model " + p + " --ctx-size 8192 --parallel 2 --cache-type-k q8_0 --cache-type-v Q8_0 --json");
  ASSERT_EQ(q.rc, 0) << q.out;
  auto jq = nlohmann::json::parse(q.out);
  EXPECT_EQ(jq["llamacpp_kv"]["n_stream"], 2);
  EXPECT_EQ(jq["llamacpp_kv"]["cells"], 4096);
  EXPECT_EQ(jq["llamacpp_kv"]["k_bytes"], 557056);
  EXPECT_EQ(jq["llamacpp_kv"]["bytes"], 1114112);
  EXPECT_EQ(run("model " + p + " --cache-type-k q9_0").rc, 2);
  EXPECT_EQ(run("model " + p + " --gpu h100").rc, 2);  // not an option of the GGUF report

  // --engine llamacpp[@build] is the engine a GGUF is reported for; another engine is refused.
  auto e = run("model " + p + " --engine llamacpp@b8157 --json");
  ASSERT_EQ(e.rc, 0) << e.out;
  EXPECT_EQ(nlohmann::json::parse(e.out)["engine"]["version"], "b8157");
  auto v = run("model " + p + " --engine vllm");
  EXPECT_EQ(v.rc, 2) << v.out;
  EXPECT_NE(v.out.find("a GGUF model is reported for llama.cpp only"), std::string::npos) << v.out;

  auto t = run("model " + p);
  ASSERT_EQ(t.rc, 0) << t.out;
  EXPECT_NE(t.out.find("Tiny Llama  llama  [Q4_0]  GGUF v3, 1 file"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("2 layers; 4 heads, 2 KV heads, head dim 16/16; embedding 64, feed-forward 128, vocab 100; context 4096"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("q4_0            14            73728            41472"), std::string::npos) << t.out;

  // The folder holding it reads the same; a projector beside it is set aside with a note.
  Writer proj;
  proj.kv_str("general.architecture", "clip");
  proj.write((d / "mmproj-F16.gguf").string());
  auto f = run("model " + d.string() + " --json");
  ASSERT_EQ(f.rc, 0) << f.out;
  EXPECT_EQ(nlohmann::json::parse(f.out)["checkpoint_bytes"], 62352);
  EXPECT_NE(f.out.find("mmproj-F16.gguf (a multimodal projector) not counted"), std::string::npos);
  fs::remove_all(d);
}

TEST(GgufModelCli, HostileFileExitsTwoWithOneLine) {
  fs::path d = temp_dir("bad");
  std::string p = (d / "bad.gguf").string();
  Writer w = tiny_llama();
  std::string b = w.bytes();
  b.resize(b.size() / 2);  // the data section cut short
  {
    std::ofstream(p, std::ios::binary) << b;
  }
  auto r = run("model " + p);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find(p + ": tensor '"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run past the end of the"), std::string::npos) << r.out;

  // A .gguf that is not there, or a split set missing a part.
  auto missing = run("model " + (d / "nope.gguf").string());
  EXPECT_EQ(missing.rc, 2) << missing.out;
  EXPECT_NE(missing.out.find("nope.gguf: file: not a regular file"), std::string::npos) << missing.out;
  auto part = run("model " + (d / "m-00002-of-00003.gguf").string());
  EXPECT_EQ(part.rc, 2) << part.out;
  EXPECT_NE(part.out.find("m-00001-of-00003.gguf: split: part 1 of 3 is missing"), std::string::npos) << part.out;

  // --model FILE.gguf where a config is expected: a clear line, not "too large".
  tiny_llama().write((d / "ok.gguf").string());
  auto plan = run("plan --model " + (d / "ok.gguf").string() + " --gpu h100");
  EXPECT_EQ(plan.rc, 2) << plan.out;
  EXPECT_NE(plan.out.find("a GGUF file"), std::string::npos) << plan.out;
  auto folder = run("plan --model " + d.string() + " --gpu h100");
  EXPECT_EQ(folder.rc, 2) << folder.out;
  EXPECT_NE(folder.out.find("a folder of GGUF files"), std::string::npos) << folder.out;
  fs::remove_all(d);
}

TEST(GgufModelCli, SlidingWindowCacheOfGptOss) {
  // A 4-layer gpt-oss header (2 KV heads x 64, window 128): layers 0 and 2 slide. At --ctx-size
  // 4096 --parallel 1: base 2 layers x 128 x 2 B x 4096 = 2 MiB of K; SWA PAD(128 + 512, 256) = 768
  // cells, 2 x 128 x 2 B x 768 = 393216 B of K.
  Writer w;
  w.kv_str("general.architecture", "gpt-oss")
      .kv_u32("gpt-oss.block_count", 4)
      .kv_u32("gpt-oss.context_length", 131072)
      .kv_u32("gpt-oss.embedding_length", 256)
      .kv_u32("gpt-oss.attention.head_count", 4)
      .kv_u32("gpt-oss.attention.head_count_kv", 2)
      .kv_u32("gpt-oss.attention.key_length", 64)
      .kv_u32("gpt-oss.attention.value_length", 64)
      .kv_u32("gpt-oss.attention.sliding_window", 128)
      .tensor("token_embd.weight", {256, 8}, T_F16, 4096);
  fs::path d = temp_dir("oss");
  std::string p = (d / "oss.gguf").string();
  w.write(p);
  auto r = run("model " + p + " --ctx-size 4096 --parallel 1 --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["llamacpp_kv"]["layers"], 2);
  EXPECT_EQ(j["llamacpp_kv"]["k_bytes"], 2 * 1024 * 1024);
  EXPECT_EQ(j["llamacpp_kv"]["swa"]["cells"], 768);
  EXPECT_EQ(j["llamacpp_kv"]["swa"]["k_bytes"], 393216);
  EXPECT_EQ(j["llamacpp_kv"]["swa"]["log"],
            "llama_kv_cache: size =    0.75 MiB (   768 cells,   2 layers,  1/1 seqs), K (f16):    0.38 MiB, V (f16):    0.38 MiB");
  fs::remove_all(d);
}
