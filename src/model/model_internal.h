// Internal interfaces of the model reader (src/model): quantization parsing, inventory
// building, safetensors headers. Not part of the public headers.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/model.h"
#include "model/json_util.h"

namespace headroom::model_detail {

// Quantization from config.json's quantization_config (qc, may be null) and/or the text of
// hf_quant_config.json (may be empty; it wins when both are given, as ModelOpt loaders read it first).
Quantization parse_quantization(const json* qc, std::string_view source, std::string_view hf_quant_text,
                                std::string_view hf_quant_source);

// Vision tower parameter count from vision_config (0 with present=true when the family's
// tower layout is not modelled; the caller notes that).
// root: the whole config.json object (Mistral-3 keeps its projector settings there).
VisionTower parse_vision(const json* vc, std::string_view family, int64_t text_hidden, std::string_view source,
                         const json* root = nullptr);

// Nemotron-NAS (DeciLM) block_configs -> per-layer attention / KV heads / FFN width (config_nemotron_nas.cpp);
// sets num_kv_heads (first attention block's) and intermediate_size (widest FFN) when the config has none.
void nemotron_nas_layers(ModelConfig& c, const json* block_configs, const std::string& source);
// DeciLM _ffn_mult_to_intermediate_size: int(2 * ffn_mult * hidden / 3) rounded up to a multiple of 256.
int64_t nas_ffn_mult_to_intermediate(double ffn_mult, int64_t hidden);

// RoPE facts (rotary_dim, rope_local_rotary_dim) from the config (config_rope.cpp); call after the
// per-layer attention kinds and head dims are set.
void parse_rope(ModelConfig& c, const std::vector<const json*>& s, const std::string& tsrc);

// The tensor inventory derived from the config (every tensor the checkpoint holds).
std::vector<TensorInfo> derive_inventory(const ModelConfig& c);

// Fills params_total / params_mtp / params_active / checkpoint_bytes(_mtp) from model.tensors.
void compute_totals(Model& m);

// Classifies a checkpoint tensor name (role, layer, expert) for tensors read from safetensors.
void classify_tensor(const ModelConfig& c, TensorInfo& t);

// Bytes of a tensor of `shape` stored as `dtype`; InputError when the element count overflows.
int64_t tensor_bytes(const std::vector<int64_t>& shape, DType dtype, std::string_view source, std::string_view name);

// One safetensors file's header: the tensors it holds (name, shape, dtype, bytes).
struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;
  int64_t header_bytes = 0;  // JSON header length
  int64_t data_bytes = 0;    // sum of tensor byte ranges
};
inline constexpr int64_t kMaxSafetensorsHeader = 100 * 1000 * 1000;  // 100 MB, as the safetensors crate caps it

// Parses a header from the first bytes of a file (`prefix` must hold 8 + header length bytes,
// or as many as the file has) given the file's total size. Validates the length, the JSON,
// dtypes, shapes and that data_offsets are consistent, in range and do not overlap.
SafetensorsHeader parse_safetensors_header(std::string_view prefix, int64_t file_size, std::string_view source);
// Reads only the header of a .safetensors file from disk.
SafetensorsHeader read_safetensors_file(const std::string& path);

// Reads a whole small text file (config.json, index.json), capped at max_bytes.
std::string read_text_file(const std::string& path, int64_t max_bytes = 64 * 1000 * 1000);

// ASCII lower case (catalog ids are matched case-insensitively).
std::string lower(std::string_view s);
// Catalog (catalog_lookup.cpp): lower-case id -> id of every embedded data/models/<org>/<name>/.
const std::map<std::string, std::string>& catalog_index();
// The catalog entry that answers `spec`: the id itself, a renamed twin, or a stand-in (same name
// under another owner or folder, an official -FP8 sibling derived from its base, a Google base derived
// from NVIDIA's NVFP4 copy of it), with `note` saying which when it is not the id itself.
// How a stand-in's config is made from id's: as it is, with the owner's block-FP8 or AWQ
// quantization_config added (an official -FP8 / -AWQ sibling), or without its quantization (id is
// NVIDIA's ModelOpt copy of the base).
enum class Derivation { None, Fp8Block, Awq4, StripQuantization };
struct CatalogHit {
  std::string id;
  Derivation derivation = Derivation::None;
  std::string note;
};
std::optional<CatalogHit> find_in_catalog(std::string_view spec);
// Whether <base_id>-FP8, when not in the catalog, is derived from base_id (see catalog_lookup.cpp).
bool derives_fp8_block_sibling(const std::string& base_id);
// Whether <owner>/<name>, when not in the catalog, is derived from nvidia/<name>-NVFP4 without its
// quantization (see catalog_lookup.cpp): Google's bf16 Gemma bases only.
bool derives_base_from_nvfp4_copy(std::string_view spec);
// config.json text without quantization_config (the base of a ModelOpt copy).
std::string without_quantization(std::string_view config_text, const std::string& source);
// config.json text with the block-FP8 quantization_config of Qwen's / Z.ai's -FP8 checkpoints added.
std::string with_fp8_block_quantization(std::string_view config_text, const std::string& source);
// Whether <base_id>-AWQ, when not in the catalog, is derived from base_id (Qwen's text models).
bool derives_awq_sibling(const std::string& base_id);
// config.json text as Qwen's official -AWQ checkpoints have it: the base's, float16, with AutoAWQ's
// 4-bit GEMM quantization_config (group 128, zero point).
std::string with_awq_quantization(std::string_view config_text, const std::string& source);

}  // namespace headroom::model_detail
