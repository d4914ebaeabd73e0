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

// How a reasoning model (gpt-5) answers when it calls a tool: a reasoning item with its
// encrypted_content, a short commentary message, then the call. Ids carry `turn`.
inline QJsonObject responsesReasoningCall(const QString &code, const QString &turn) {
    QJsonObject response = responsesFunctionCall(code, QStringLiteral("call_") + turn);
    response.insert(QStringLiteral("id"), QString(QStringLiteral("resp_turn") + turn));
    const QJsonObject reasoning{
        {QStringLiteral("type"), QStringLiteral("reasoning")},
        {QStringLiteral("id"), QString(QStringLiteral("rs_") + turn)},
        {QStringLiteral("summary"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("summary_text")},
                                {QStringLiteral("text"), QStringLiteral("I should run code.")}}}},
        {QStringLiteral("encrypted_content"), QString(QStringLiteral("gAAAA-enc-") + turn)}};
    const QJsonObject commentary{
        {QStringLiteral("type"), QStringLiteral("message")},
        {QStringLiteral("id"), QString(QStringLiteral("msg_c") + turn)},
        {QStringLiteral("role"), QStringLiteral("assistant")},
        {QStringLiteral("status"), QStringLiteral("completed")},
        {QStringLiteral("phase"), QStringLiteral("commentary")},
        {QStringLiteral("content"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("output_text")},
                                {QStringLiteral("text"), QStringLiteral("Let me compute that.")},
                                {QStringLiteral("annotations"), QJsonArray()}}}}};
    QJsonArray output{reasoning, commentary};
    for (const QJsonValue &item : response.value(QStringLiteral("output")).toArray())
        output.append(item);
    response.insert(QStringLiteral("output"), output);
    return response;
}

// The final answer of a reasoning model: its reasoning, then the message.
inline QJsonObject responsesReasonedMessage(const QString &text) {
    QJsonObject response = responsesMessage(text);
    QJsonArray output{
        QJsonObject{{QStringLiteral("type"), QStringLiteral("reasoning")},
                    {QStringLiteral("id"), QStringLiteral("rs_final")},
                    {QStringLiteral("summary"), QJsonArray()},
                    {QStringLiteral("encrypted_content"), QStringLiteral("gAAAA-enc-final")}}};
    for (const QJsonValue &item : response.value(QStringLiteral("output")).toArray())
        output.append(item);
    response.insert(QStringLiteral("output"), output);
    return response;
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
