// SHA-256 through OpenSSL 3's EVP interface.
#include "hub/sha256.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "error.h"

namespace vkllm::hub {

struct Sha256::Ctx {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  ENSURE(ctx_->md && EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) == 1, "OpenSSL cannot compute SHA-256");
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, size_t n) { EVP_DigestUpdate(ctx_->md, data, n); }

void Sha256::update_from_file(const std::filesystem::path& path, uint64_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 20);
  while (bytes > 0 && in) {
    in.read(buf.data(), std::streamsize(std::min<uint64_t>(bytes, buf.size())));
    update(buf.data(), size_t(in.gcount()));
    bytes -= uint64_t(in.gcount());
  }
  ENSURE(bytes == 0, fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_->md, digest, &n);
  EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr);
  std::string out;
  for (unsigned i = 0; i < n; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace vkllm::hub
