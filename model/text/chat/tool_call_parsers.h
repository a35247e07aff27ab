// The tool-call syntax of each ChatFormat (chat_format.h), read from a reply's content: each
// parser finds where calls start, reads them, and leaves the rest as content. Internal to
// chat_output.cpp.
#pragma once
#include <string_view>

#include "text/chat/chat_output.h"

namespace vkllm {

// Fills r.content and r.tool_calls from `text` (the reply after its reasoning).
void parse_tool_calls(std::string_view text, const ChatReplyOptions& o, bool partial, ChatReply& r);

}  // namespace vkllm
