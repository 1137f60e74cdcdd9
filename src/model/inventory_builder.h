// Builds a derived tensor inventory: adds tensors by checkpoint name, expanding a quantized
// Linear into the tensors its storage format writes (packed weight, scales, zeros).
#pragma once
#include <string>
#include <vector>

#include "headroom/model.h"

namespace headroom::model_detail {

inline constexpr size_t kMaxTensors = 5'000'000;  // >15x the largest real checkpoint (Kimi-K2 NVFP4: 0.28M tensors)

class InventoryBuilder {
 public:
  explicit InventoryBuilder(const ModelConfig& c) : c_(c) {}

  // A plain tensor in the model dtype (or `dtype`), counted as parameters unless params_scale == 0.
  void plain(const std::string& name, std::vector<int64_t> shape, TensorRole role, int layer, int expert = -1);
  void plain_dtype(const std::string& name, std::vector<int64_t> shape, DType dtype, TensorRole role, int layer, int expert = -1);
  // An nn.Linear with weight [out, in] (+ bias [out]) stored per the checkpoint's quantization
  // of `module` (exclude lists honoured). never_quantized: embeddings-like projections.
  void linear(const std::string& module, int64_t out, int64_t in, TensorRole role, int layer, int expert = -1,
              bool bias = false, bool never_quantized = false);
  void norm(const std::string& module, int64_t dim, int layer, bool bias = false);
  // A tensor with an explicit logical parameter count (packed formats, scales = 0).
  void raw(const std::string& name, std::vector<int64_t> shape, DType dtype, TensorRole role, int layer, int expert, int64_t params) {
    push(name, std::move(shape), dtype, role, layer, expert, params);
  }

  std::vector<TensorInfo> take() { return std::move(out_); }
  const ModelConfig& config() const { return c_; }

 private:
  void push(std::string name, std::vector<int64_t> shape, DType dtype, TensorRole role, int layer, int expert, int64_t params);
  const ModelConfig& c_;
  std::vector<TensorInfo> out_;
};

}  // namespace headroom::model_detail
