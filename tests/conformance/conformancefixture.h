#pragma once

// Shared fixture of the conformance suite: our equivalents of the reference suite's FakeSandbox,
// call-item builders and `_build_plan` helper.

#include "interception/agenticloopplan.h"
#include "interception/codeinterpreterinterception.h"
#include "interception/interceptionkeys.h"
#include "interception/interceptionsettings.h"
#include "sandbox/sandboxregistry.h"
#include "support/futurewait.h"
#include "support/recordingsandboxbackend.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtGlobal>

#include <memory>

namespace loopscope::conformance {

// JSON text → object. Test literals read like the wire format; a typo is a test bug, so abort.
// A backtick stands for an escaped quote (\") inside a JSON string: moc 6.4 loses track of
// classes when a raw string literal contains backslash-quote.
inline QJsonObject J(const char *text) {
    QJsonParseError error{};
    const QJsonDocument doc =
        QJsonDocument::fromJson(QByteArray(text).replace('`', "\\\""), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        qFatal("bad JSON literal in test: %s (%s)", text, qPrintable(error.errorString()));
    return doc.object();
}

inline QString str(QLatin1String s) {
    return QString(s);
}

// The reference's FakeSandbox: a recording backend whose sandboxes are "sbx_fake" and whose
// code prints "42", injected the way LiteLLM's `sandbox_config` is.
struct Harness {
    explicit Harness(InterceptionSettings settings = {},
                     const QString &stdoutText = QStringLiteral("42"))
        : interception(settings, &registry, &sandbox) {
        sandbox.stdoutText = stdoutText;
    }
    ~Harness() { awaitFuture(registry.removeAll()); }

    SandboxRegistry registry;
    RecordingSandboxBackend sandbox;
    CodeInterpreterInterception interception;
};

inline InterceptionSettings onlyProviders(const QStringList &providers) {
    InterceptionSettings s;
    s.enabledProviders = providers;
    return s;
}

// The reference's `_function_call_item`: a Responses output item calling the code tool.
inline QJsonObject functionCallItem(const QString &callId = QStringLiteral("c1"),
                                    const QString &name = str(keys::kCodeExecutionToolName)) {
    return QJsonObject{
        {QStringLiteral("type"), QStringLiteral("function_call")},
        {QStringLiteral("call_id"), callId},
        {QStringLiteral("name"), name},
        {QStringLiteral("arguments"), QStringLiteral("{\"code\":\"print(40 + 2)\"}")}};
}

// The reference's `_chat_function_call_item`: a chat tool call of the code tool.
inline QJsonObject chatFunctionCallItem(const QString &id = QStringLiteral("call_1"),
                                        const QString &name = str(keys::kCodeExecutionToolName)) {
    return QJsonObject{{QStringLiteral("id"), id},
                       {QStringLiteral("type"), QStringLiteral("function")},
                       {QStringLiteral("function"),
                        QJsonObject{{QStringLiteral("name"), name},
                                    {QStringLiteral("arguments"),
                                     QStringLiteral("{\"code\":\"print(40 + 2)\"}")}}}};
}

inline QJsonObject responsesWith(const QJsonArray &output) {
    return QJsonObject{{QStringLiteral("output"), output}};
}

inline QJsonObject chatResponseWith(const QJsonArray &toolCalls) {
    return QJsonObject{
        {QStringLiteral("choices"),
         QJsonArray{QJsonObject{{QStringLiteral("message"),
                                 QJsonObject{{QStringLiteral("tool_calls"), toolCalls}}}}}}};
}

// A final Responses answer: one message item.
inline QJsonObject messageOnlyResponse() {
    return J(R"j({"output":[{"type":"message","content":[]}]})j");
}

// A gate payload with one Responses-style call.
inline QJsonObject payloadWithCall(const QString &code,
                                   const QString &callId = QStringLiteral("c1")) {
    const QString arguments = QString::fromUtf8(
        QJsonDocument(QJsonObject{{QStringLiteral("code"), code}}).toJson(QJsonDocument::Compact));
    return QJsonObject{
        {QStringLiteral("tool_calls"),
         QJsonArray{QJsonObject{{QStringLiteral("call_id"), callId},
                                {QStringLiteral("name"), str(keys::kCodeExecutionToolName)},
                                {QStringLiteral("arguments"), arguments}}}}};
}

inline QJsonArray userX() {
    return QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                  {QStringLiteral("content"), QStringLiteral("x")}}};
}

// The reference's `_build_plan`: one `print(40 + 2)` call, Responses surface, key "sbxkey1".
inline Outcome<AgenticLoopPlan>
buildPlan(CodeInterpreterInterception &interception,
          const QJsonObject &kwargs = J(
              R"j({"litellm_call_id":"k1",
                                                  "_code_interpreter_interception_sandbox_key":"sbxkey1"})j"),
          const QJsonObject &payload = payloadWithCall(QStringLiteral("print(40 + 2)"))) {
    return awaitFuture(interception.buildAgenticLoopPlan(payload, QStringLiteral("gpt-5"), userX(),
                                                         J(R"j({"tools":[]})j"), kwargs));
}

// Plan messages (the reference's `_iter_messages`).
inline QJsonArray planMessages(const AgenticLoopPlan &plan) {
    if (!plan.requestPatch || !plan.requestPatch->messages)
        return {};
    return *plan.requestPatch->messages;
}

inline QStringList outputTypes(const QJsonObject &response) {
    QStringList types;
    for (const QJsonValue &item : response.value(QLatin1String("output")).toArray())
        types.append(item.toObject().value(QLatin1String("type")).toString());
    return types;
}

} // namespace loopscope::conformance
