#pragma once

#include "conversation/conversationitem.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

namespace loopscope {

// Chat Completions spoken over an Anthropic Messages upstream (dialects.md §5): a chat request
// becomes a Messages request, a Messages answer (or error) becomes a chat completion (or an
// OpenAI-shaped error). The request goes through the conversation model
// (ChatCompletionsCodec::decodeRequest), the answer through MessagesCodec::decodeResponse; this
// class holds the rules between the two vocabularies. Responses over Anthropic is
// ResponsesOverChat composed with this (reasoning kept as `thinking_blocks`, see below).
// Pure: JSON in, JSON out.
//
// Reasoning: an assistant message carries Anthropic's thinking as `reasoning_content` (its text)
// and `thinking_blocks` (the thinking / redacted_thinking blocks, signature and data included:
// LiteLLM's names for the same thing), and a follow-up's assistant message with
// `thinking_blocks` sends them back as they were, so the signature survives the round trip.
class ChatOverMessages {
public:
    // Anthropic requires max_tokens; a client that sent none gets LiteLLM's default for its
    // anthropic/ routes, so a config moved from LiteLLM answers the same length. With thinking
    // on, the budget is added on top (max_tokens must exceed it).
    static constexpr int kDefaultMaxTokens = 4096;

    struct MessagesRequest {
        QJsonObject body;
        QString error; // why the request cannot go over Messages (an unsupported tool or part)
        QString errorParam;
        // Parameters sent that have no effect over Messages and are left out (store, metadata,
        // service_tier, prompt_cache_key, verbosity): named so the bridge can say so.
        QStringList ignored;
        bool ok() const { return error.isEmpty(); }
    };
    // System and developer messages → `system`; user and assistant turns → messages with text,
    // image (data URLs as base64 sources, http(s) URLs as url sources) and document blocks;
    // assistant tool_calls → tool_use blocks (arguments parsed into `input`); tool results →
    // tool_result blocks in a user turn (consecutive turns of one role merged); thinking_blocks
    // → thinking blocks first in their turn. Function tools → {name, description,
    // input_schema}; tool_choice auto/required/none/named → auto/any/none/tool,
    // parallel_tool_calls false → disable_parallel_tool_use; max_tokens /
    // max_completion_tokens (else kDefaultMaxTokens); reasoning_effort → thinking with
    // thinkingBudget(); stop → stop_sequences; temperature, top_p, stream; user →
    // metadata.user_id. Parameters Anthropic has no equivalent for are refused by name, never
    // dropped silently.
    static MessagesRequest messagesRequest(const QJsonObject &chat);
    // reasoning_effort as a thinking budget (LiteLLM's: low 1024, medium 2048, high 4096);
    // 0 for "none" or an unknown word.
    static int thinkingBudget(const QString &effort);

    // A Messages answer as a chat.completion: text blocks → content (null when none),
    // tool_use → tool_calls, thinking → reasoning_content + thinking_blocks, stop_reason →
    // finish_reason, usage with the cache counts.
    static QJsonObject completionFromMessage(const QJsonObject &message);
    // end_turn/stop_sequence/pause_turn → stop, tool_use → tool_calls, max_tokens and a full
    // context window → length, refusal → content_filter.
    static QString finishReasonOf(const QString &stopReason);
    // Messages usage as chat usage: prompt_tokens counts every input token (uncached + cache
    // read + cache write, as OpenAI's does), prompt_tokens_details.cached_tokens the cache reads
    // and .cache_write_tokens the cache writes.
    static QJsonObject chatUsage(const QJsonObject &messagesUsage);
    // The thinking blocks of decoded reasoning items, as `thinking_blocks`.
    static QJsonArray thinkingBlocks(const QList<ConversationItem> &items);

    // An Anthropic error answer ({"type":"error","error":{type,message}}, or anything else) as
    // OpenAI's error body, with the upstream's message; and the status the client gets (529
    // overloaded → 503, everything else as it came).
    static QJsonObject openAiError(int status, const QByteArray &body);
    static int clientStatus(int upstreamStatus);
};

} // namespace loopscope
