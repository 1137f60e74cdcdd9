// Runs a libFuzzer harness without libFuzzer: every file in a seed folder, then N
// deterministic mutations of them (bit flips, truncations, insertions, splices).
// Usage: fuzz_xxx SEED_DIR [ITERATIONS]. A crash or hang fails the ctest that runs it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> seeds;
  if (argc > 1 && std::filesystem::is_directory(argv[1])) {
    for (const auto& e : std::filesystem::directory_iterator(argv[1])) {
      std::ifstream f(e.path(), std::ios::binary);
      seeds.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
  }
  if (seeds.empty()) seeds.push_back("");
  long iterations = argc > 2 ? std::atol(argv[2]) : 10000;
  for (const auto& s : seeds) LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  std::mt19937_64 rng(12345);
  for (long i = 0; i < iterations; ++i) {
    std::string s = seeds[rng() % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < edits; ++k) {
      switch (rng() % 6) {
        case 0: if (!s.empty()) s[rng() % s.size()] ^= static_cast<char>(1u << (rng() % 8)); break;
        case 1: if (!s.empty()) s.resize(rng() % s.size()); break;
        case 2: s.insert(s.begin() + static_cast<long>(s.empty() ? 0 : rng() % s.size()), static_cast<char>(rng())); break;
        case 3: if (!s.empty()) s[rng() % s.size()] = static_cast<char>(rng()); break;
        case 4: { const std::string& o = seeds[rng() % seeds.size()]; if (!o.empty()) s += o.substr(rng() % o.size(), 64); break; }
        case 5: if (s.size() > 2) { size_t a = rng() % s.size(); s.erase(a, rng() % (s.size() - a)); } break;
      }
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  std::printf("%zu seeds, %ld mutations: no crash\n", seeds.size(), iterations);
  return 0;
}
