#pragma once

#include <QJsonObject>

namespace loopscope {

// The token counts of one answer, read from whichever dialect wrote them (dialects.md §1):
// Responses (input/output_tokens, input_tokens_details.cached_tokens / cache_write_tokens,
// output_tokens_details.reasoning_tokens), Chat Completions (prompt/completion_tokens and their
// _details), Messages (input/output_tokens, cache_read_input_tokens,
// cache_creation_input_tokens, server_tool_use).
struct Usage {
    qint64 input = 0;
    qint64 output = 0;
    qint64 total = 0; // as reported, else input + output
    qint64 reasoning = 0;
    qint64 cacheRead = 0;
    qint64 cacheWrite = 0;
    qint64 serverToolRequests = 0; // web searches, fetches and code runs the vendor counted
    bool hasInput = false;
    bool hasOutput = false;
    bool hasCache = false; // a cache count was reported, read or write

    static Usage fromWire(const QJsonObject &usage);
    // The shape flows store: input_tokens, output_tokens, total_tokens, and cache_read_tokens /
    // cache_write_tokens when a cache count was reported.
    QJsonObject toJson() const;
    // The counts in a dialect's own usage object, written over `base` (the usage as it came, so
    // fields the model does not name stay): a count goes in when it was reported, is not zero,
    // or `base` has its key. Nothing reported and no base gives {}.
    QJsonObject toResponses(QJsonObject base = {}) const;
    QJsonObject toChat(QJsonObject base = {}) const;
    QJsonObject toMessages(QJsonObject base = {}) const;

    friend bool operator==(const Usage &, const Usage &) = default;
};

} // namespace loopscope
