// The follow-up steps (spec §3.5–3.8): safety rails, max_agentic_loops validation and the
// follow-up request. The loop that runs them (cleanup exactly once, multi-round order, the
// ceiling) is tested on the production driver in tests/loop/tst_loopcleanup.cpp.

#include "interception/agenticfollowup.h"
#include "interception/interceptionkeys.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace loopscope;

namespace {

QJsonObject J(const char *text) {
    QJsonParseError error{};
    const QJsonDocument doc =
        QJsonDocument::fromJson(QByteArray(text).replace('`', "\\\""), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        qFatal("bad JSON literal in test: %s", text);
    return doc.object();
}

QJsonValue V(const char *text) {
    const QByteArray wrapped = QByteArray("{\"v\":") + text + "}";
    return J(wrapped.constData()).value(QLatin1String("v"));
}

AgenticLoopPlan planWith(const QJsonArray &messages) {
    AgenticLoopPlan plan;
    plan.runAgenticLoop = true;
    AgenticLoopRequestPatch patch;
    patch.messages = messages;
    plan.requestPatch = patch;
    return plan;
}

FollowUpContext responsesContext() {
    FollowUpContext context;
    context.request.surface = QStringLiteral("responses");
    context.request.model = QStringLiteral("gpt-5");
    context.maxLoops = 3;
    context.fingerprint = QStringLiteral("fp1");
    return context;
}

} // namespace

class TestAgenticFollowUp : public QObject {
    Q_OBJECT

private slots:
    void fingerprintIsSortedCompactJson() {
        const QJsonObject payload =
            J(R"j({"tool_calls":[{"name":"litellm_code_execution","call_id":"c1",
                                                          "arguments":"{}"}]})j");
        QCOMPARE(AgenticFollowUp::fingerprint(payload),
                 QStringLiteral("{\"tool_calls\":[{\"arguments\":\"{}\",\"call_id\":\"c1\","
                                "\"name\":\"litellm_code_execution\"}]}"));
    }

    void safetyRails_data() {
        QTest::addColumn<QStringList>("seen");
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("maxLoops");
        QTest::addColumn<QString>("error");
        QTest::newRow("fresh, depth 0") << QStringList{} << 0 << 3 << QString();
        QTest::newRow("depth 2 of 3") << QStringList{QStringLiteral("a")} << 2 << 3 << QString();
        QTest::newRow("at the ceiling")
            << QStringList{} << 3 << 3
            << QStringLiteral("Exceeded max_agentic_loops=3 for model=gpt-5");
        QTest::newRow("repeat")
            << QStringList{QStringLiteral("fp")} << 0 << 3
            << QStringLiteral(
                   "Agentic loop detected repeated tool-call fingerprint; aborting rerun");
        QTest::newRow("repeat beats ceiling")
            << QStringList{QStringLiteral("fp")} << 5 << 3
            << QStringLiteral(
                   "Agentic loop detected repeated tool-call fingerprint; aborting rerun");
    }
    void safetyRails() {
        QFETCH(QStringList, seen);
        QFETCH(int, depth);
        QFETCH(int, maxLoops);
        QFETCH(QString, error);
        const std::optional<QString> got = AgenticFollowUp::safetyRailError(
            QStringLiteral("fp"), seen, depth, maxLoops, QStringLiteral("gpt-5"));
        QCOMPARE(got.value_or(QString()), error);
        QCOMPARE(got.has_value(), !error.isEmpty());
    }

    void validatedMaxAgenticLoops_data() {
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<int>("expected");
        QTest::addColumn<QString>("error");
        const QString field = QStringLiteral("litellm_params.max_agentic_loops");
        QTest::newRow("absent → default") << QJsonValue(QJsonValue::Undefined) << 3 << QString();
        QTest::newRow("null → default") << V("null") << 3 << QString();
        QTest::newRow("int") << V("5") << 5 << QString();
        QTest::newRow("whole float") << V("5.0") << 5 << QString();
        QTest::newRow("string") << V("\" 7 \"") << 7 << QString();
        QTest::newRow("fraction") << V("2.5") << 0
                                  << field + QStringLiteral(" must be an integer, got 2.5");
        QTest::newRow("bool") << V("true") << 0
                              << field + QStringLiteral(" must be an integer, got True");
        QTest::newRow("word") << V("\"many\"") << 0
                              << field + QStringLiteral(" must be an integer, got 'many'");
        QTest::newRow("list") << V("[1]") << 0
                              << field + QStringLiteral(" must be an integer, got [1]");
        QTest::newRow("zero") << V("0") << 0
                              << field + QStringLiteral(" must be at least 1, got 0");
        QTest::newRow("negative string")
            << V("\"-2\"") << 0 << field + QStringLiteral(" must be at least 1, got -2");
    }
    void validatedMaxAgenticLoops() {
        QFETCH(QJsonValue, value);
        QFETCH(int, expected);
        QFETCH(QString, error);
        const Outcome<int> got = AgenticFollowUp::validatedMaxAgenticLoops(
            value, QStringLiteral("litellm_params.max_agentic_loops"));
        QCOMPARE(got.error, error);
        if (error.isEmpty())
            QCOMPARE(got.value, expected);
    }

    void agenticRequestSplitsFlatRequests() {
        const QJsonObject flat = J(R"j({"model":"gpt-5","input":"hi","temperature":0,"tools":[],
            "litellm_metadata":{"a":1},"_agentic_loop_depth":"2","_agentic_loop_fingerprints":["x","y"],
            "_code_interpreter_interception_active":true,"user_api_key_hash":"h"})j");
        const AgenticRequest request = AgenticRequest::fromFlat(flat, QStringLiteral("responses"));
        QCOMPARE(request.model, QStringLiteral("gpt-5"));
        QCOMPARE(request.messages, QJsonValue(QStringLiteral("hi")));
        QCOMPARE(request.optionalParams, J(R"j({"temperature":0,"tools":[]})j"));
        QCOMPARE(
            request.kwargs.keys(),
            QStringList({QStringLiteral("_agentic_loop_depth"),
                         QStringLiteral("_agentic_loop_fingerprints"),
                         QStringLiteral("_code_interpreter_interception_active"),
                         QStringLiteral("litellm_metadata"), QStringLiteral("user_api_key_hash")}));
        QCOMPARE(request.depth(), 2);
        QCOMPARE(request.fingerprints(), QStringList({QStringLiteral("x"), QStringLiteral("y")}));
        QCOMPARE(request.messageList(), QJsonArray{J(R"j({"role":"user","content":"hi"})j")});
        QCOMPARE(request.toFlat(), flat);
        QCOMPARE(request.hookKwargs(QStringLiteral("openai")).value(keys::kAgenticLoopApiSurface),
                 QJsonValue(QStringLiteral("responses")));
        QCOMPARE(request.hookKwargs(QStringLiteral("openai"))
                     .value(QLatin1String("custom_llm_provider")),
                 QJsonValue(QStringLiteral("openai")));
        const AgenticRequest chat = AgenticRequest::fromFlat(
            J(R"j({"model":"m","messages":[],"input":"x"})j"), QStringLiteral("chat_completions"));
        QCOMPARE(chat.messages, QJsonValue(QJsonArray()));
        QCOMPARE(chat.optionalParams,
                 J(R"j({"input":"x"})j")); // not a chat field, left to the provider
    }

    void responsesFollowUpRequest() {
        FollowUpContext context = responsesContext();
        context.depth = 1;
        context.fingerprints = {QStringLiteral("fp0")};
        context.request.messages = QJsonValue(QStringLiteral("hi"));
        context.request.optionalParams =
            J(R"j({"tools":[{"type":"function","name":"litellm_code_execution"}],
            "tool_choice":"auto","temperature":0.2,"stream":false,"prompt_cache_key":"from-request",
            "_code_interpreter_interception_converted_stream":true})j");
        context.request.kwargs = J(R"j({"_code_interpreter_interception_active":true,
            "_code_interpreter_interception_sandbox_key":"k","_code_interpreter_interception_converted_stream":true,
            "_websearch_interception_converted_stream":true,"_agentic_loop_depth":1,"max_agentic_loops":9,
            "litellm_call_id":"call","litellm_logging_obj":"x"})j");
        AgenticLoopPlan plan = planWith(QJsonArray{J(R"j({"role":"user","content":"hi"})j")});
        plan.requestPatch->model = QStringLiteral("gpt-5-mini");
        plan.requestPatch->tools =
            QJsonArray{J(R"j({"type":"function","name":"litellm_code_execution"})j")};
        plan.requestPatch->optionalParams =
            J(R"j({"temperature":0.2,"prompt_cache_key":"from-plan-params"})j");
        plan.requestPatch->kwargs = J(
            R"j({"prompt_cache_key":"stale-copy","_code_interpreter_interception_session_scoped":false,
            "_headroom_interception_x":1,"litellm_call_id":"call-from-plan"})j");

        const Outcome<QJsonObject> built = AgenticFollowUp::buildFollowUpRequest(plan, context);
        QVERIFY2(built.ok(), qPrintable(built.error));
        // The plan's kwargs win over the request's; a key sent as a param wins over both.
        QCOMPARE(built.value, J(R"j({
            "model":"gpt-5-mini",
            "input":[{"role":"user","content":"hi"}],
            "tools":[{"type":"function","name":"litellm_code_execution"}],
            "tool_choice":"auto","temperature":0.2,"prompt_cache_key":"from-plan-params",
            "_code_interpreter_interception_active":true,"_code_interpreter_interception_sandbox_key":"k",
            "_code_interpreter_interception_session_scoped":false,
            "litellm_call_id":"call-from-plan",
            "_agentic_loop_depth":2,"max_agentic_loops":3,"_agentic_loop_fingerprints":["fp0","fp1"]})j"));
    }

    void chatFollowUpRequest() {
        FollowUpContext context = responsesContext();
        context.request.surface = QStringLiteral("chat_completions");
        context.request.optionalParams =
            J(R"j({"tool_choice":"required","stream":true,"stream_options":{}})j");
        context.request.kwargs = J(R"j({"litellm_metadata":{"user_tag":"t"},"acompletion":true,
                                        "_code_interpreter_interception_active":true})j");
        AgenticLoopPlan plan = planWith(QJsonArray{J(R"j({"role":"user","content":"x"})j")});

        // The chat driver only keeps a tool_choice the plan itself passed on.
        Outcome<QJsonObject> built = AgenticFollowUp::buildFollowUpRequest(plan, context);
        QVERIFY2(built.ok(), qPrintable(built.error));
        QVERIFY(!built.value.contains(QLatin1String("tool_choice")));
        QVERIFY(!built.value.contains(QLatin1String("stream")));
        QVERIFY(!built.value.contains(QLatin1String("stream_options")));
        QVERIFY(!built.value.contains(QLatin1String("acompletion")));
        QCOMPARE(built.value.value(QLatin1String("messages")),
                 QJsonValue(*plan.requestPatch->messages));
        QVERIFY(!built.value.contains(QLatin1String("input")));
        QCOMPARE(
            built.value.value(QLatin1String("litellm_metadata")),
            V(R"j({"user_tag":"t","_code_interpreter_interception_active":true,"_agentic_loop_depth":1,
                        "max_agentic_loops":3,"_agentic_loop_fingerprints":["fp1"]})j"));

        plan.requestPatch->optionalParams = J(R"j({"tool_choice":"required"})j");
        built = AgenticFollowUp::buildFollowUpRequest(plan, context);
        QCOMPARE(built.value.value(QLatin1String("tool_choice")),
                 QJsonValue(QStringLiteral("required")));
    }

    void missingPatchedMessagesIsAnError_data() {
        QTest::addColumn<QString>("surface");
        QTest::addColumn<QString>("error");
        QTest::newRow("responses")
            << QStringLiteral("responses")
            << QStringLiteral("Agentic loop plan missing patched responses input");
        QTest::newRow("chat") << QStringLiteral("chat_completions")
                              << QStringLiteral("Agentic loop plan missing patched messages");
    }
    void missingPatchedMessagesIsAnError() {
        QFETCH(QString, surface);
        QFETCH(QString, error);
        FollowUpContext context = responsesContext();
        context.request.surface = surface;
        AgenticLoopPlan plan;
        plan.runAgenticLoop = true;
        QCOMPARE(AgenticFollowUp::buildFollowUpRequest(plan, context).error, error);
    }
};

QTEST_GUILESS_MAIN(TestAgenticFollowUp)
#include "tst_agenticfollowup.moc"
