// Safetensors headers written by the test (8-byte little-endian length + JSON header + data):
// real tensors become the inventory; hostile headers are one InputError each; the CLI reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "headroom/error.h"
#include "headroom/model.h"
#include "model/model_internal.h"

using namespace headroom;
namespace fs = std::filesystem;

namespace {
std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}
// A safetensors file: header JSON + `data_bytes` zero bytes of data.
std::string st_file(const std::string& header, size_t data_bytes) { return le64(header.size()) + header + std::string(data_bytes, '\0'); }
void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }
std::string error_of(const std::string& bytes) {
  try {
    model_detail::parse_safetensors_header(bytes, static_cast<int64_t>(bytes.size()), "x.safetensors");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kTinyConfig = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 8, "num_hidden_layers": 1,
  "vocab_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 16,
  "torch_dtype": "bfloat16", "tie_word_embeddings": true})";

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
}  // namespace

TEST(Safetensors, ParsesValidHeader) {
  // Two tensors: BF16 [4, 8] = 64 B at [0, 64); F8_E4M3 [16] = 16 B at [64, 80).
  std::string h = R"({"__metadata__": {"format": "pt"}, "a": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]},
                      "b": {"dtype": "F8_E4M3", "shape": [16], "data_offsets": [64, 80]}})";
  auto f = st_file(h, 80);
  auto hdr = model_detail::parse_safetensors_header(f, static_cast<int64_t>(f.size()), "x");
  ASSERT_EQ(hdr.tensors.size(), 2u);
  EXPECT_EQ(hdr.data_bytes, 80);
  EXPECT_EQ(hdr.tensors[0].bytes + hdr.tensors[1].bytes, 80);
}

TEST(Safetensors, HostileHeadersAreInputErrors) {
  // Length larger than the file.
  EXPECT_NE(error_of(le64(1000) + "{}").find("larger than the file"), std::string::npos);
  // Huge length (above the 100 MB cap), file claims to be big enough.
  EXPECT_NE(error_of(le64(uint64_t{1} << 62) + "{}").find("exceeds the"), std::string::npos);
  // Too short for the length itself.
  EXPECT_NE(error_of("abc").find("too short"), std::string::npos);
  // Bad JSON.
  EXPECT_NE(error_of(st_file("{\"a\": {", 0)).find("json"), std::string::npos);
  // Overlapping offsets.
  EXPECT_NE(error_of(st_file(R"({"a": {"dtype": "U8", "shape": [8], "data_offsets": [0, 8]},
                                 "b": {"dtype": "U8", "shape": [8], "data_offsets": [4, 12]}})", 12))
                .find("overlap"),
            std::string::npos);
  // Offsets inconsistent with dtype x shape.
  EXPECT_NE(error_of(st_file(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}})", 8)).find("needs 16"), std::string::npos);
  // Offsets past the data.
  EXPECT_NE(error_of(st_file(R"({"a": {"dtype": "U8", "shape": [8], "data_offsets": [0, 8]}})", 4)).find("past the data"), std::string::npos);
  // Unknown dtype, negative shape, absurd shape.
  EXPECT_NE(error_of(st_file(R"({"a": {"dtype": "Q9", "shape": [1], "data_offsets": [0, 1]}})", 1)).find("unknown dtype"), std::string::npos);
  EXPECT_NE(error_of(st_file(R"({"a": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 1]}})", 1)).find("non-negative"), std::string::npos);
  EXPECT_NE(error_of(st_file(R"({"a": {"dtype": "U8", "shape": [4294967296, 4294967296], "data_offsets": [0, 1]}})", 1)).find("2^52"),
            std::string::npos);
  EXPECT_NE(error_of(st_file(R"([1, 2, 3])", 0)).find("must be a JSON object"), std::string::npos);
}

TEST(Safetensors, FolderShardsAreTheTruthAndDifferencesAreNoted) {
  std::string dir = ::testing::TempDir() + "/st_model";
  fs::remove_all(dir);
  fs::create_directories(dir);
  write(dir + "/config.json", kTinyConfig);
  // The derived inventory of kTinyConfig has 11 tensors (embed, 2 norms, q/k/v/o, 3 MLP, final norm; tied).
  // The shard holds the embedding (16 x 8 BF16 = 256 B), q_proj (8 x 8 BF16 = 128 B) and one extra tensor.
  std::string h = R"({"model.embed_tokens.weight": {"dtype": "BF16", "shape": [16, 8], "data_offsets": [0, 256]},
                      "model.layers.0.self_attn.q_proj.weight": {"dtype": "BF16", "shape": [8, 8], "data_offsets": [256, 384]},
                      "model.layers.0.self_attn.rotary_emb.inv_freq": {"dtype": "F32", "shape": [2], "data_offsets": [384, 392]}})";
  write(dir + "/model-00001-of-00001.safetensors", st_file(h, 392));
  auto m = load_model(dir);
  EXPECT_TRUE(m->from_safetensors);
  EXPECT_EQ(m->checkpoint_bytes, 392);
  EXPECT_EQ(m->tensors.size(), 3u);
  std::string notes;
  for (const auto& n : m->notes) notes += n + "\n";
  EXPECT_NE(notes.find("9 derived tensors not in the safetensors files"), std::string::npos) << notes;
  EXPECT_NE(notes.find("1 safetensors tensors not in the derived inventory: model.layers.0.self_attn.rotary_emb.inv_freq"), std::string::npos)
      << notes;
  // A hostile shard in a folder fails the load with the shard's name.
  write(dir + "/model-bad.safetensors", le64(1 << 20) + "{}");
  try {
    load_model(dir);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model-bad.safetensors: header"), std::string::npos);
  }
}

TEST(Safetensors, IndexTotalSizeUsedWithoutShards) {
  std::string dir = ::testing::TempDir() + "/st_index";
  fs::remove_all(dir);
  fs::create_directories(dir);
  write(dir + "/config.json", kTinyConfig);
  write(dir + "/model.safetensors.index.json", R"({"metadata": {"total_size": 123456}, "weight_map": {}})");
  auto m = load_model(dir);
  EXPECT_EQ(m->checkpoint_bytes, 123456);
  EXPECT_FALSE(m->from_safetensors);
}

TEST(ModelCli, JsonContractKeys) {
  auto r = run("model meta-llama/Meta-Llama-3.1-70B --tp 8 --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["params_total"].get<int64_t>(), 70'553'706'496);
  EXPECT_EQ(j["checkpoint_bytes"].get<int64_t>(), 2 * 70'553'706'496);
  ASSERT_EQ(j["ranks"].size(), 8u);
  // Checkpoint share 17,640,734,720 + SGLang's FP32 RoPE table 131,072 x 128 x 4 B = 67,108,864.
  EXPECT_EQ(j["ranks"][0]["weight_bytes"].get<int64_t>(), 17'640'734'720 + 67'108'864);
  EXPECT_EQ(j["ranks"][0]["kv_bytes_per_token"].get<int64_t>(), 40'960);
  EXPECT_TRUE(j.contains("params_active"));
  EXPECT_TRUE(j.contains("bytes_by_component"));
}

TEST(ModelCli, TextTableAndBadInput) {
  auto r = run("model nvidia/GLM-5-NVFP4 --tp 8");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("743.91B total"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("440.91 GB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0-7"), std::string::npos) << r.out;
  auto bad = run("model no-such/model");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1) << bad.out;
  std::string dir = ::testing::TempDir() + "/cli_bad";
  fs::create_directories(dir);
  write(dir + "/config.json", "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": ");
  auto trunc = run("model " + dir);
  EXPECT_EQ(trunc.rc, 2);
  EXPECT_NE(trunc.out.find("config.json: json"), std::string::npos) << trunc.out;
  write(dir + "/model.safetensors", le64(1u << 30) + "{}");
  write(dir + "/config.json", kTinyConfig);
  auto st = run("model " + dir);
  EXPECT_EQ(st.rc, 2);
  EXPECT_NE(st.out.find("model.safetensors: header: header length 1073741824 exceeds the"), std::string::npos) << st.out;
  EXPECT_EQ(run("model meta-llama/Meta-Llama-3.1-8B --tp 0").rc, 2);
}
