#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

namespace loopscope {

// One request of an agentic loop as the hooks see it (LiteLLM's split of a call): the model,
// the conversation (Responses `input` or chat `messages`), the provider params and the
// litellm-level kwargs (markers, loop controls, litellm_metadata, user_api_key_hash, ...).
struct AgenticRequest {
    QString surface; // keys::kResponsesSurface or keys::kChatCompletionsSurface
    QString model;
    QJsonValue messages;        // as sent: a string or a list for Responses, a list for chat
    QJsonObject optionalParams; // every other provider key (tools, tool_choice, stream, ...)
    QJsonObject kwargs;         // keys for which keys::isLitellmOnlyKey() holds

    // Splits a flat request (the client body after the pre-call hook) by keys::isLitellmOnlyKey.
    static AgenticRequest fromFlat(const QJsonObject &request, const QString &surface);
    // Flat again: {model, input|messages, ...optionalParams, ...kwargs}.
    QJsonObject toFlat() const;
    // Hook kwargs as LiteLLM's drivers pass them: kwargs + _agentic_loop_api_surface (and
    // custom_llm_provider when given).
    QJsonObject hookKwargs(const QString &customLlmProvider = {}) const;
    // The conversation as a list (a Responses string input becomes one user message).
    QJsonArray messageList() const;

    bool isChat() const;
    // "messages" on the chat surface, "input" on Responses.
    QString messagesKey() const;
    int depth() const;                // _agentic_loop_depth (int or numeric string), default 0
    QStringList fingerprints() const; // _agentic_loop_fingerprints (non-list → empty)
};

} // namespace loopscope
