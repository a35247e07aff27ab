// One file from the hub to the cache, safely: bytes go to "<dest>.part"; a .part left by an
// earlier run is resumed with an HTTP Range request, and so is a connection that drops (a few
// tries, waiting longer each time); the size and the SHA-256 the hub lists are checked before the
// file takes its name. A file that fails the check is deleted: nothing corrupt is ever kept.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "hub/http_client.h"

namespace vkllm::hub {

struct DownloadItem {
  std::string url;             // where the bytes are (the hub's resolve URL; redirects followed)
  std::string label;           // how messages name it (the file's path in the repository)
  std::filesystem::path dest;  // the final path
  uint64_t size = 0;           // bytes the hub lists; 0: unknown
  std::string sha256;          // what the hub lists; empty: taken from the answer's X-Linked-Etag, if any
};

struct DownloadResult {
  uint64_t bytes = 0;         // the file's size
  uint64_t resumed_from = 0;  // bytes a .part of an earlier run already had
  int reconnects = 0;         // connections lost and resumed
  bool verified = false;      // the SHA-256 was checked
};

struct DownloadOptions {
  bool terminal = false;            // a progress bar (else a line at start and end)
  std::function<bool()> cancelled;  // polled while bytes flow (Ctrl-C)
  int max_reconnects = 5;           // a dropped connection is resumed this often
  double first_wait_seconds = 0.5;  // before the first resume; doubles each time
};

// Throws HttpStatusError for an answer other than success (401, 403, 404, ...), Interrupted when
// cancelled (the .part is kept), Error for everything else, with the reason.
DownloadResult download_file(const HttpClient& http, const DownloadItem& item, const DownloadOptions& o);

}  // namespace vkllm::hub
