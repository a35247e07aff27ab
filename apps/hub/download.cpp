// The resumable, verified download of one file.
#include "hub/download.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "hub/progress_bar.h"
#include "hub/sha256.h"
#include "output.h"

namespace vkllm::hub {

namespace {

namespace fs = std::filesystem;

std::string size_text(uint64_t b) { return cli::human_bytes(double(b)); }

uint64_t header_number(const HttpResult& r, const std::string& name) {
  auto it = r.headers.find(name);
  if (it == r.headers.end()) return 0;
  try {
    return std::stoull(it->second);
  } catch (...) {
    return 0;
  }
}

// The hub's X-Linked-Etag (or a plain ETag) is the LFS SHA-256, in quotes.
std::string etag_sha256(const HttpResult& r) {
  for (const char* name : {"x-linked-etag", "etag"}) {
    auto it = r.headers.find(name);
    if (it == r.headers.end()) continue;
    std::string v = it->second;
    if (v.starts_with("W/")) v.erase(0, 2);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    if (is_sha256_hex(v)) return v;
  }
  return "";
}

// A connection lost mid-file, none made, or an answer that says "try again later".
bool retryable(const HttpResult& r) {
  if (r.status == 200 || r.status == 206 || r.status == 0) return !r.transport_error.empty();
  return r.status == 408 || r.status == 429 || r.status >= 500;
}

// One download in progress: the .part file, what it holds and its running hash.
class Transfer {
 public:
  Transfer(const DownloadItem& item, const DownloadOptions& o) : item_(item), o_(o) {
    part_ = item.dest;
    part_ += ".part";
    fs::create_directories(item.dest.parent_path());
    // Two downloads of one file at once would interleave their bytes: the second one stops.
    lock_fd_ = ::open(part_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ENSURE(lock_fd_ >= 0, fmt::format("{}: cannot write: {}", part_.string(), std::strerror(errno)));
    ENSURE(flock(lock_fd_, LOCK_EX | LOCK_NB) == 0,
           fmt::format("{}: another vkllm is downloading this file", part_.string()));
    std::error_code ec;
    uint64_t have = fs::exists(part_, ec) ? fs::file_size(part_, ec) : 0;
    if (ec || (item.size && have > item.size)) fs::remove(part_, ec), have = 0;
    if (have) hash_.update_from_file(part_, have);
    result_.resumed_from = offset_ = have;
    expected_sha_ = item.sha256;
    total_ = item.size;
  }
  ~Transfer() { ::close(lock_fd_); }
  Transfer(const Transfer&) = delete;

  DownloadResult run(const HttpClient& http) {
    ProgressBar bar(item_.label, total_, offset_, o_.terminal);
    bar_ = &bar;
    double wait = o_.first_wait_seconds;
    while (!(total_ && offset_ == total_)) {
      HttpResult r = fetch(http);
      if (cancelled()) throw Interrupted(kept_text());
      bool ok = r.status == 200 || r.status == 206;
      if (r.status == 416 && total_ && offset_ >= total_) break;  // nothing left to send
      if (ok && r.transport_error.empty() && !r.aborted) break;
      if (!retryable(r)) throw HttpStatusError(r.status, fmt::format("{}: HTTP {}", item_.url, r.status));
      if (++result_.reconnects > o_.max_reconnects)
        throw Error(fmt::format("{}: {} ({} tries); {}", item_.label, why(r), result_.reconnects, kept_text()));
      bar.note(fmt::format("{}: {} at {}; resuming (try {} of {})", item_.label, why(r), size_text(offset_),
                           result_.reconnects + 1, o_.max_reconnects + 1));
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      wait *= 2;
      if (cancelled()) throw Interrupted(kept_text());
    }
    verify();
    result_.bytes = offset_;
    bar.finish(result_.verified ? "SHA-256 verified" : "no SHA-256 listed to verify");
    return result_;
  }

 private:
  bool cancelled() const { return o_.cancelled && o_.cancelled(); }

  std::string kept_text() const {
    return fmt::format("{} keeps {}{}: run the command again to resume", part_.string(), size_text(offset_),
                       total_ ? " of " + size_text(total_) : "");
  }

  static std::string why(const HttpResult& r) {
    return r.transport_error.empty() ? fmt::format("HTTP {}", r.status) : r.transport_error;
  }

  // The server decides how this response starts: 206 continues the .part, 200 starts it over.
  bool on_status(const HttpResult& r, FILE* out) {
    if (r.status != 200 && r.status != 206) return false;
    if (r.status == 200 && offset_ > 0) {
      bar_->note(fmt::format("{}: the server cannot resume; starting over", item_.label));
      if (ftruncate(fileno(out), 0) != 0) return false;
      offset_ = 0;
      hash_.hex();  // starts the hash over
    }
    if (expected_sha_.empty()) expected_sha_ = etag_sha256(r);
    if (!total_) total_ = header_number(r, "x-linked-size");
    if (!total_ && header_number(r, "content-length")) total_ = offset_ + header_number(r, "content-length");
    return true;
  }

  HttpResult fetch(const HttpClient& http) {
    FILE* out = std::fopen(part_.c_str(), "ab");
    ENSURE(out, fmt::format("{}: cannot write: {}", part_.string(), std::strerror(errno)));
    bool write_failed = false;
    HttpClient::Stream s{
        .on_status = [&](const HttpResult& r) { return on_status(r, out); },
        .on_body =
            [&](const char* p, size_t n) {
              if (std::fwrite(p, 1, n, out) != n) return !(write_failed = true);
              hash_.update(p, n);
              offset_ += n;
              bar_->update(offset_);
              return true;
            },
        .on_tick = [&] { return !cancelled(); },
    };
    HttpResult r = http.stream(item_.url, offset_, s);
    int err = errno;
    bool closed = std::fclose(out) == 0;
    ENSURE(!write_failed && closed, fmt::format("{}: cannot write: {}", part_.string(), std::strerror(err)));
    return r;
  }

  void verify() {
    std::string actual = hash_.hex();
    auto discard = [&](const std::string& what) {
      std::error_code ec;
      fs::remove(part_, ec);
      throw Error(fmt::format("{}: {}; the download was deleted: run the command again", item_.label, what));
    };
    if (item_.size && offset_ != item_.size)
      discard(fmt::format("got {} bytes, the hub lists {}", offset_, item_.size));
    if (!expected_sha_.empty() && actual != expected_sha_)
      discard(fmt::format("SHA-256 mismatch (the hub lists {}, the download has {})", expected_sha_, actual));
    result_.verified = !expected_sha_.empty();
    std::error_code ec;
    fs::rename(part_, item_.dest, ec);
    ENSURE(!ec, fmt::format("{}: cannot rename to {}: {}", part_.string(), item_.dest.string(), ec.message()));
  }

  const DownloadItem& item_;
  const DownloadOptions& o_;
  fs::path part_;
  Sha256 hash_;
  std::string expected_sha_;
  uint64_t offset_ = 0, total_ = 0;
  DownloadResult result_;
  ProgressBar* bar_ = nullptr;
  int lock_fd_ = -1;
};

}  // namespace

DownloadResult download_file(const HttpClient& http, const DownloadItem& item, const DownloadOptions& o) {
  return Transfer(item, o).run(http);
}

}  // namespace vkllm::hub
