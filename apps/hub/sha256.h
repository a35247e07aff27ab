// SHA-256 (OpenSSL's EVP) fed piece by piece: the hub names an LFS file by the SHA-256 of its
// bytes, which a download checks before keeping the file.
#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

namespace vkllm::hub {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t n);
  // Adds the first `bytes` bytes of a file (what an earlier run downloaded). Throws Error.
  void update_from_file(const std::filesystem::path& path, uint64_t bytes);
  std::string hex();  // 64 lowercase hex digits; the hash starts over afterwards

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

bool is_sha256_hex(const std::string& s);  // 64 hex digits

}  // namespace vkllm::hub
