// Conformance: the gate (async_should_run_agentic_loop) and tool-call extraction.

#include "conformancefixture.h"

#include <QTest>

using namespace loopscope;
using namespace loopscope::conformance;

class TestGate : public QObject {
    Q_OBJECT

private slots:
    void test_should_run_detects_only_matching_function_call() {
        Harness h;
        const QJsonObject active = J(R"j({"_code_interpreter_interception_active":true})j");

        const GateDecision match = h.interception.shouldRunAgenticLoop(
            responsesWith({functionCallItem()}), QStringLiteral("openai"), active);
        QVERIFY(match.run);
        QVERIFY(!match.payload.value(QLatin1String("tool_calls")).toArray().isEmpty());

        const GateDecision other = h.interception.shouldRunAgenticLoop(
            responsesWith(
                {functionCallItem(QStringLiteral("c1"), QStringLiteral("something_else"))}),
            QStringLiteral("openai"), active);
        QVERIFY(!other.run);
        QCOMPARE(other.payload, QJsonObject());
    }

    void test_gate_refuses_without_server_active_marker() {
        // A model (or client) calling litellm_code_execution on a request the pre-call hook
        // never converted must not get code executed.
        Harness h;
        const GateDecision forged = h.interception.shouldRunAgenticLoop(
            responsesWith({functionCallItem()}), QStringLiteral("openai"), QJsonObject{});
        QVERIFY(!forged.run);
        QCOMPARE(forged.payload, QJsonObject());
    }

    void test_gate_rechecks_provider_scope() {
        Harness h(onlyProviders({QStringLiteral("openai")}));
        const GateDecision decision = h.interception.shouldRunAgenticLoop(
            responsesWith({functionCallItem()}), QStringLiteral("anthropic"),
            J(R"j({"_code_interpreter_interception_active":true})j"));
        QVERIFY(!decision.run);
    }

    void test_chat_completion_gate_detects_code_execution_tool_call() {
        Harness h;
        const GateDecision decision = h.interception.shouldRunAgenticLoop(
            chatResponseWith({chatFunctionCallItem(QStringLiteral("call_123"))}),
            QStringLiteral("openai"), J(R"j({"_code_interpreter_interception_active":true,
                  "_agentic_loop_api_surface":"chat_completions"})j"));
        QVERIFY(decision.run);
        const QJsonObject call =
            decision.payload.value(QLatin1String("tool_calls")).toArray().first().toObject();
        QCOMPARE(call.value(QLatin1String("id")).toString(), QStringLiteral("call_123"));
        QCOMPARE(call.value(QLatin1String("arguments")).toString(),
                 QStringLiteral("{\"code\":\"print(40 + 2)\"}"));
    }

    void test_chat_completion_gate_refuses_without_server_active_marker() {
        Harness h;
        const GateDecision decision = h.interception.shouldRunAgenticLoop(
            chatResponseWith({chatFunctionCallItem()}), QStringLiteral("openai"),
            J(R"j({"_agentic_loop_api_surface":"chat_completions"})j"));
        QVERIFY(!decision.run);
        QCOMPARE(decision.payload, QJsonObject());
    }

    void test_extract_tool_calls_reads_object_attributes() {
        // LiteLLM also accepts typed objects with attributes; our responses are always JSON,
        // so the equivalent is an item carrying the same fields among extra ones (id, status)
        // in a different order: detection reads the fields, not the shape.
        const QJsonObject response = J(R"j({"output":[
            {"status":"completed","arguments":"{`code`:`print(1)`}","id":"fc_1",
             "call_id":"c9","name":"litellm_code_execution","type":"function_call"}]})j");
        const QJsonArray calls =
            CodeInterpreterInterception::extractCodeExecutionToolCalls(response);
        QCOMPARE(calls.size(), 1);
        QCOMPARE(calls.first().toObject().value(QLatin1String("call_id")).toString(),
                 QStringLiteral("c9"));
        QCOMPARE(calls.first().toObject().value(QLatin1String("arguments")).toString(),
                 QStringLiteral("{\"code\":\"print(1)\"}"));
    }
};

QTEST_GUILESS_MAIN(TestGate)
#include "tst_gate.moc"
