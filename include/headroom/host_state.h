// What is already on the host's GPUs before a server starts (issue 29): read from the text
// `nvidia-smi --query-gpu=...,memory.used,... --format=csv` and `--query-compute-apps=...`
// print, from `rocm-smi --showmeminfo vram --json`, or live from the NVIDIA management library.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

struct HostGpu {
  int index = 0;
  std::string name;        // as the tool prints it ("NVIDIA H100 80GB HBM3"); "" for rocm-smi
  std::string uuid;        // when the query listed it
  int64_t total_bytes = 0, used_bytes = 0, free_bytes = 0;
};

struct HostProcess {
  int64_t pid = 0;
  std::string name;
  int64_t used_bytes = 0;
  int gpu_index = -1;      // -1: its GPU is not known (no uuid in the GPU table, several GPUs)
};

struct HostState {
  std::string source;      // file name, "stdin" or "NVML"
  std::vector<HostGpu> gpus;        // in index order
  std::vector<HostProcess> processes;
};

// Parses the text of one or both nvidia-smi CSV queries (in any order, one after the other, with
// or without "nounits"), or rocm-smi's JSON. Throws InputError (source, field, problem) on text
// that is neither, or when no GPU table is present.
HostState parse_host_state(std::string_view text, std::string_view source);

// --host-state FILE | - (stdin) | live (NVML through dlopen; InputError where it is absent).
HostState read_host_state(const std::string& spec);

}  // namespace headroom
