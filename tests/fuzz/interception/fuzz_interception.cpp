// The interception transforms on arbitrary JSON, as the proxy drives them (core/loop's
// AgenticLoop): the server strips server-only root keys and sets provider and identity; then
// pre-call → gate on an arbitrary upstream response → plan (code "runs" on a recording backend,
// the stand-in for a sandbox) → follow-up request → its pre-call. Input: {"request": <client
// body>, "response": <upstream answer>} or just a client body; non-JSON bytes become the code.
// Invariants: no interception-internal or loop-control key and no sandbox key value in any
// upstream body; a request that was not converted never passes the gate (forged markers are not
// honoured) and runs no code; a client-chosen sandbox key is never adopted.
#include "fuzzsupport.h"
#include "interception/agenticfollowup.h"
#include "interception/agenticrequest.h"
#include "interception/codeinterpreterinterception.h"
#include "interception/interceptionkeys.h"
#include "support/futurewait.h"
#include "support/recordingsandboxbackend.h"

#include <QJsonArray>
#include <QJsonDocument>

using namespace loopscope;
using loopscope::fuzz::FuzzInput;

namespace {

struct World {
    SandboxRegistry registry;
    RecordingSandboxBackend sandbox;
    CodeInterpreterInterception interception{InterceptionSettings{}, &registry, &sandbox};
};

World &world() {
    static World *w = [] {
        loopscope::fuzz::ensureApp();
        return new World;
    }();
    return *w;
}

bool isServerOnlyKey(const QString &key) { // as core/loop/agenticloop.cpp
    return key.startsWith(u'_') || key == QLatin1String("user_api_key_hash") ||
           key == QLatin1String("custom_llm_provider") || key == QLatin1String("litellm_call_id") ||
           key == QLatin1String("litellm_logging_obj");
}

bool isPrivateKey(const QString &key) {
    return keys::isInterceptionInternalKey(key) || keys::isAgenticLoopControlKey(key) ||
           key == keys::kLitellmMetadata;
}

// Whether any object key anywhere in `value` is private (for inputs that had none).
bool hasPrivateKeyDeep(const QJsonValue &value) {
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it)
            if (isPrivateKey(it.key()) || hasPrivateKeyDeep(it.value()))
                return true;
    } else if (value.isArray()) {
        for (const QJsonValue &item : value.toArray())
            if (hasPrivateKeyDeep(item))
                return true;
    }
    return false;
}

void checkUpstreamBody(const QJsonObject &request, bool inputHadPrivateKeys) {
    const QJsonObject body = keys::providerRequestBody(request);
    for (auto it = body.begin(); it != body.end(); ++it)
        FUZZ_CHECK(!isPrivateKey(it.key()) && !keys::isLitellmOnlyKey(it.key()));
    if (!inputHadPrivateKeys)
        FUZZ_CHECK(!hasPrivateKeyDeep(body));
    const QString sandboxKey = request.value(keys::kSandboxKey).toString();
    if (sandboxKey.size() >= 16) // minted keys are 32 hex characters
        FUZZ_CHECK(
            !QJsonDocument(body).toJson(QJsonDocument::Compact).contains(sandboxKey.toUtf8()));
}

QJsonObject defaultResponse(const QString &code, bool chat) {
    const QString arguments = QString::fromUtf8(
        QJsonDocument(QJsonObject{{QStringLiteral("code"), code}}).toJson(QJsonDocument::Compact));
    if (chat) {
        return QJsonObject{
            {QStringLiteral("choices"),
             QJsonArray{QJsonObject{
                 {QStringLiteral("message"),
                  QJsonObject{{QStringLiteral("tool_calls"),
                               QJsonArray{QJsonObject{
                                   {QStringLiteral("id"), QStringLiteral("call_1")},
                                   {QStringLiteral("type"), QStringLiteral("function")},
                                   {QStringLiteral("function"),
                                    QJsonObject{{QStringLiteral("name"),
                                                 QString(keys::kCodeExecutionToolName)},
                                                {QStringLiteral("arguments"), arguments}}}}}}}}}}}};
    }
    return QJsonObject{
        {QStringLiteral("output"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("function_call")},
                                {QStringLiteral("call_id"), QStringLiteral("c1")},
                                {QStringLiteral("name"), QString(keys::kCodeExecutionToolName)},
                                {QStringLiteral("arguments"), arguments}}}}};
}

QString forgedSandboxKey(const QJsonObject &client) {
    const QJsonValue root = client.value(keys::kSandboxKey);
    if (root.isString())
        return root.toString();
    return client.value(keys::kLitellmMetadata).toObject().value(keys::kSandboxKey).toString();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    World &w = world();
    FuzzInput input(data, size);
    const QJsonDocument doc = QJsonDocument::fromJson(input.all());
    QJsonObject client;
    QJsonObject response;
    bool haveResponse = false;
    if (doc.isObject() && doc.object().value(QStringLiteral("request")).isObject()) {
        client = doc.object().value(QStringLiteral("request")).toObject();
        haveResponse = doc.object().value(QStringLiteral("response")).isObject();
        response = doc.object().value(QStringLiteral("response")).toObject();
    } else if (doc.isObject()) {
        client = doc.object();
    } else {
        // Arbitrary bytes as the model's code, in an ordinary converted request.
        client =
            QJsonObject{{QStringLiteral("model"), QStringLiteral("gpt-5")},
                        {QStringLiteral("input"), QString::fromUtf8(input.all())},
                        {QStringLiteral("tools"),
                         QJsonArray{QJsonObject{
                             {QStringLiteral("type"), QStringLiteral("code_interpreter")},
                             {QStringLiteral("container"),
                              QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
    }
    const bool chat = client.contains(QStringLiteral("messages"));
    if (!haveResponse)
        response = defaultResponse(QString::fromUtf8(input.all().left(200)), chat);
    const bool inputHadPrivateKeys = hasPrivateKeyDeep(client) || hasPrivateKeyDeep(response);
    const QString forged = forgedSandboxKey(client);

    // What AgenticLoop::start does before the hooks.
    QJsonObject request = client;
    for (const QString &key : client.keys())
        if (isServerOnlyKey(key))
            request.remove(key);
    request.insert(QStringLiteral("user_api_key_hash"), QStringLiteral("identity-1"));
    request.insert(QStringLiteral("custom_llm_provider"), QStringLiteral("openai"));
    request.insert(QStringLiteral("litellm_call_id"), QStringLiteral("req-1"));

    const CallType callType = chat ? CallType::ACompletion : CallType::AResponses;
    const QString surface =
        chat ? QString(keys::kChatCompletionsSurface) : QString(keys::kResponsesSurface);
    const bool converted = w.interception.preCallDeploymentHook(request, callType);
    checkUpstreamBody(request, inputHadPrivateKeys);
    if (!forged.isEmpty())
        FUZZ_CHECK(request.value(keys::kSandboxKey).toString() != forged);

    const AgenticRequest split = AgenticRequest::fromFlat(request, surface);
    const QJsonObject kwargs = split.hookKwargs(QStringLiteral("openai"));
    const GateDecision gate =
        w.interception.shouldRunAgenticLoop(response, QStringLiteral("openai"), kwargs);
    const int runsBefore = w.sandbox.runCount();
    if (!converted)
        FUZZ_CHECK(!gate.run);
    if (gate.run) {
        const Outcome<AgenticLoopPlan> plan = awaitFuture(w.interception.buildAgenticLoopPlan(
            gate.payload, split.model, split.messages, split.optionalParams, kwargs));
        if (plan.ok() && plan.value.runAgenticLoop) {
            FollowUpContext context;
            context.request = split;
            context.fingerprint = AgenticFollowUp::fingerprint(gate.payload);
            const Outcome<QJsonObject> followUp =
                AgenticFollowUp::buildFollowUpRequest(plan.value, context);
            if (followUp.ok()) {
                QJsonObject next = followUp.value;
                checkUpstreamBody(next, inputHadPrivateKeys);
                w.interception.preCallDeploymentHook(next, callType);
                checkUpstreamBody(next, inputHadPrivateKeys);
            }
            awaitFuture(w.interception.agenticLoopCleanupHook(plan.value, kwargs));
        }
    } else {
        FUZZ_CHECK(w.sandbox.runCount() == runsBefore);
    }
    awaitFuture(w.registry.removeAll());
    // The recording backend keeps every call; only this input's matter.
    w.sandbox.createCalls.clear();
    w.sandbox.runCalls.clear();
    w.sandbox.removeCalls.clear();
    return 0;
}
