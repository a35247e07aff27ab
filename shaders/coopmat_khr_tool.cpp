// coopmat_khr_tool IN.spv OUT.spv: writes the KHR form of an NV cooperative-matrix module
// (coopmat_khr.h). A build step; one line on stderr and exit 1 when the module cannot be rewritten.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "coopmat_khr.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: coopmat_khr_tool IN.spv OUT.spv\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::fprintf(stderr, "error: %s: cannot read\n", argv[1]);
    return 1;
  }
  if (bytes.size() % 4 != 0) {
    std::fprintf(stderr, "error: %s: not a whole number of 32-bit words\n", argv[1]);
    return 1;
  }
  std::vector<uint32_t> words(bytes.size() / 4);
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(words.data()));
  try {
    std::vector<uint32_t> khr = vkllm::coopmat_khr::nv_to_khr(words);
    std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(khr.data()), std::streamsize(khr.size() * 4));
    if (!out) {
      std::fprintf(stderr, "error: %s: cannot write\n", argv[2]);
      return 1;
    }
  } catch (const vkllm::coopmat_khr::RewriteError& e) {
    std::fprintf(stderr, "error: %s: %s\n", argv[1], e.what());
    return 1;
  }
  return 0;
}
