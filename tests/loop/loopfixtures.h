#pragma once

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

// OpenAI-shaped upstream answers for loop tests (what a function-calling model sends back).
namespace loopfixtures {

inline QJsonObject responsesFunctionCall(const QString &code,
                                         const QString &callId = QStringLiteral("call_1")) {
    const QJsonObject args{{QStringLiteral("code"), code}};
    return {{QStringLiteral("id"), QString(QStringLiteral("resp_") + callId)},
            {QStringLiteral("object"), QStringLiteral("response")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("model"), QStringLiteral("scripted")},
            {QStringLiteral("output"),
             QJsonArray{QJsonObject{
                 {QStringLiteral("type"), QStringLiteral("function_call")},
                 {QStringLiteral("id"), QString(QStringLiteral("fc_") + callId)},
                 {QStringLiteral("call_id"), callId},
                 {QStringLiteral("name"), QStringLiteral("litellm_code_execution")},
                 {QStringLiteral("arguments"),
                  QString::fromUtf8(QJsonDocument(args).toJson(QJsonDocument::Compact))},
                 {QStringLiteral("status"), QStringLiteral("completed")}}}},
            {QStringLiteral("usage"), QJsonObject{{QStringLiteral("input_tokens"), 10},
                                                  {QStringLiteral("output_tokens"), 5},
                                                  {QStringLiteral("total_tokens"), 15}}}};
}

inline QJsonObject responsesMessage(const QString &text) {
    return {{QStringLiteral("id"), QStringLiteral("resp_final")},
            {QStringLiteral("object"), QStringLiteral("response")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("model"), QStringLiteral("scripted")},
            {QStringLiteral("output"),
             QJsonArray{QJsonObject{
                 {QStringLiteral("type"), QStringLiteral("message")},
                 {QStringLiteral("id"), QStringLiteral("msg_final")},
                 {QStringLiteral("role"), QStringLiteral("assistant")},
                 {QStringLiteral("status"), QStringLiteral("completed")},
                 {QStringLiteral("content"),
                  QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("output_text")},
                                         {QStringLiteral("text"), text},
                                         {QStringLiteral("annotations"), QJsonArray()}}}}}}},
            {QStringLiteral("usage"), QJsonObject{{QStringLiteral("input_tokens"), 20},
                                                  {QStringLiteral("output_tokens"), 8},
                                                  {QStringLiteral("total_tokens"), 28}}}};
}

inline QJsonObject chatCompletion(const QJsonObject &message, const QString &finishReason,
                                  int totalTokens) {
    return {
        {QStringLiteral("id"), QStringLiteral("chatcmpl-scripted")},
        {QStringLiteral("object"), QStringLiteral("chat.completion")},
        {QStringLiteral("created"), 1700000000},
        {QStringLiteral("model"), QStringLiteral("scripted")},
        {QStringLiteral("choices"),
         QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                {QStringLiteral("message"), message},
                                {QStringLiteral("finish_reason"), finishReason}}}},
        {QStringLiteral("usage"), QJsonObject{{QStringLiteral("prompt_tokens"), totalTokens - 8},
                                              {QStringLiteral("completion_tokens"), 8},
                                              {QStringLiteral("total_tokens"), totalTokens}}}};
}

inline QJsonObject chatToolCall(const QString &code,
                                const QString &callId = QStringLiteral("call_c1")) {
    const QJsonObject args{{QStringLiteral("code"), code}};
    const QJsonObject message{
        {QStringLiteral("role"), QStringLiteral("assistant")},
        {QStringLiteral("content"), QJsonValue::Null},
        {QStringLiteral("tool_calls"),
         QJsonArray{QJsonObject{
             {QStringLiteral("id"), callId},
             {QStringLiteral("type"), QStringLiteral("function")},
             {QStringLiteral("function"),
              QJsonObject{
                  {QStringLiteral("name"), QStringLiteral("litellm_code_execution")},
                  {QStringLiteral("arguments"),
                   QString::fromUtf8(QJsonDocument(args).toJson(QJsonDocument::Compact))}}}}}}};
    return chatCompletion(message, QStringLiteral("tool_calls"), 18);
}

inline QJsonObject chatText(const QString &text, int totalTokens = 28) {
    return chatCompletion(
        {{QStringLiteral("role"), QStringLiteral("assistant")}, {QStringLiteral("content"), text}},
        QStringLiteral("stop"), totalTokens);
}

} // namespace loopfixtures
