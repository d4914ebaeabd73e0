#pragma once

#include "conversation/conversationitem.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

namespace loopscope {

// The Responses API spoken over a Chat Completions upstream (dialects.md §5): a Responses
// request becomes a chat request, a chat completion becomes a Responses response. Both halves go
// through the conversation model (ResponsesCodec decodes the input items, ChatCompletionsCodec
// the completion); this class holds the rules between the two vocabularies. Pure: JSON in, JSON
// out, no ids but the ones it is given or mints.
class ResponsesOverChat {
public:
    // A request that cannot go over Chat Completions: `error` says why (a hosted tool such as
    // web_search, an input item chat has no place for). Otherwise `body` is the chat request.
    struct ChatRequest {
        QJsonObject body;
        QString error;
        QString errorParam;
        bool ok() const { return error.isEmpty(); }
    };

    // `request`: the Responses body (tools already swapped by the interception when it ran);
    // `history`: Responses items that come before `request.input` (what Loopscope keeps for a
    // previous_response_id or conversation; empty otherwise). instructions → a system message;
    // messages in order (developer → system; parts → chat parts, text-only content as a string);
    // function_call items → the assistant message's tool_calls (one message for consecutive
    // calls and the text before them); function_call_output → role "tool"; reasoning items stay
    // out (a chat upstream takes no reasoning as input, dialects.md §2); a code_interpreter_call
    // of an earlier turn → an assistant tool call with its code and a tool result with its logs.
    // Function and custom tools, tool_choice, parallel_tool_calls, temperature, top_p,
    // max_output_tokens → max_tokens, text.format → response_format, text.verbosity,
    // reasoning.effort → reasoning_effort, user, safety_identifier, prompt_cache_key,
    // service_tier, top_logprobs; stream adds stream_options.include_usage. Stateful keys
    // (store, previous_response_id, conversation, include, truncation, background) are the
    // bridge's and never sent.
    // `keepThinking` (an Anthropic upstream, through ChatOverMessages): reasoning items with
    // encrypted_content go back as the assistant turn's `thinking_blocks` instead of staying out.
    static ChatRequest chatRequest(const QJsonObject &request, const QJsonArray &history = {},
                                   bool keepThinking = false);

    // The ids one Responses answer is given: the response's, and each output item's by its slot
    // (the stream writer mints them as items start, the JSON path all at once).
    struct Ids {
        QString response;
        QString reasoning;
        QString message;
        QStringList calls; // by tool call index
    };
    static Ids mintIds(int callCount);

    // A chat.completion as a Responses response: output [reasoning (reasoning_content),
    // message (content, refusal), function_call / custom_tool_call per tool call], status from
    // finish_reason (length → incomplete max_output_tokens, content_filter → incomplete
    // content_filter), usage in Responses' names; the request's settings echoed as OpenAI does.
    static QJsonObject responseFromChat(const QJsonObject &completion, const QJsonObject &request,
                                        const Ids &ids);

    // The pieces both the JSON path and the stream build items from, so they cannot differ.
    static QJsonObject envelope(const QJsonObject &request, const QString &id, qint64 createdAt,
                                const QString &model);
    static QJsonObject reasoningItem(const QString &id, const QString &text,
                                     const QString &encrypted = {});
    // An Anthropic thinking block as a reasoning item's encrypted_content, so the next turn can
    // send it back (chatRequest with keepThinking): a thinking block's signature, or a
    // redacted_thinking block's data after kRedactedPrefix (signatures never contain ':').
    static QString thinkingEncrypted(const QJsonObject &block);
    static inline const QString kRedactedPrefix = QStringLiteral("redacted_thinking:");
    static QJsonObject messageItem(const QString &id, const QString &text, const QString &refusal);
    static QJsonObject toolCallItem(const QString &id, const ConversationItem &call);
    static QJsonObject usageFromChat(const QJsonObject &chatUsage);
    // "completed" or "incomplete", and the incomplete_details (null when completed).
    static void applyFinish(QJsonObject &response, const QString &finishReason);

    // The Responses items one answer adds to a chain (its output, ready to be input again).
    static QJsonArray chainItems(const QJsonObject &request);
};

} // namespace loopscope
