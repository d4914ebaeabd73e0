// Where LiteLLM is flawed (spec §0), Loopscope does the right thing. One test per fix.

#include "interception/agenticfollowup.h"
#include "interception/codeexecutiontool.h"
#include "interception/codeinterpreterinterception.h"
#include "interception/interceptionkeys.h"
#include "sandbox/sandboxregistry.h"
#include "support/futurewait.h"
#include "support/recordingsandboxbackend.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace loopscope;

Q_DECLARE_METATYPE(loopscope::CallType)

namespace {

// JSON literal; a backtick stands for \" (moc 6.4 mis-lexes backslash-quote in raw strings).
QJsonObject J(const char *text) {
    QJsonParseError error{};
    const QJsonDocument doc =
        QJsonDocument::fromJson(QByteArray(text).replace('`', "\\\""), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        qFatal("bad JSON literal in test: %s", text);
    return doc.object();
}

QJsonObject payloadWithArguments(const QString &arguments) {
    return QJsonObject{
        {QStringLiteral("tool_calls"),
         QJsonArray{QJsonObject{{QStringLiteral("call_id"), QStringLiteral("c1")},
                                {QStringLiteral("name"), QStringLiteral("litellm_code_execution")},
                                {QStringLiteral("arguments"), arguments}}}}};
}

QJsonArray userMessage() {
    return QJsonArray{J(R"j({"role":"user","content":"compute"})j")};
}

// A turn as gpt-5 answers it: reasoning (encrypted), a commentary message, then the call; plus a
// call of the client's own function that the loop does not answer.
QJsonObject reasoningTurn() {
    return J(R"j({"id":"resp_turn1","object":"response","status":"completed","output":[
        {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Use Python."}],
         "encrypted_content":"gAAAA-enc-1"},
        {"type":"message","id":"msg_c1","role":"assistant","status":"completed",
         "phase":"commentary",
         "content":[{"type":"output_text","text":"Let me compute.","annotations":[]}]},
        {"type":"function_call","id":"fc_1","call_id":"c1","name":"litellm_code_execution",
         "arguments":"{`code`:`print(1)`}","status":"completed"},
        {"type":"function_call","id":"fc_2","call_id":"c2","name":"get_weather",
         "arguments":"{}","status":"completed"}]})j");
}

QJsonArray outputItems(const QJsonObject &response) {
    return response.value(QLatin1String("output")).toArray();
}

} // namespace

class TestInterceptionFixes : public QObject {
    Q_OBJECT

private slots:
    void init() {
        registry = std::make_unique<SandboxRegistry>();
        backend = std::make_unique<RecordingSandboxBackend>();
        backend->uniqueIds = true;
        interception = std::make_unique<CodeInterpreterInterception>(InterceptionSettings{},
                                                                     registry.get(), backend.get());
    }
    void cleanup() {
        awaitFuture(registry->removeAll());
        interception.reset();
        backend.reset();
        registry.reset();
    }

    // LiteLLM: no sandbox key → an uncached sandbox that nothing ever deletes.
    void planWithoutSandboxKeyLeavesNoSandboxBehind_data() {
        QTest::addColumn<bool>("runFails");
        QTest::addColumn<bool>("viaPostHook");
        QTest::newRow("success, post hook") << false << true;
        QTest::newRow("success, cleanup hook") << false << false;
        QTest::newRow("run fails") << true << false;
    }
    void planWithoutSandboxKeyLeavesNoSandboxBehind() {
        QFETCH(bool, runFails);
        QFETCH(bool, viaPostHook);
        backend->failRun = runFails;
        const Outcome<AgenticLoopPlan> plan = awaitFuture(interception->buildAgenticLoopPlan(
            payloadWithArguments(QStringLiteral("{\"code\":\"print(1)\"}")),
            QStringLiteral("gpt-5"), userMessage(), J(R"j({"tools":[]})j"),
            J(R"j({"litellm_call_id":"k1"})j")));
        QCOMPARE(backend->createCount(), 1);
        if (runFails) {
            QVERIFY(!plan.ok());
        } else {
            QVERIFY2(plan.ok(), qPrintable(plan.error));
            // The sandbox is tracked under a server key the next round and the hooks share.
            const QString key = plan.value.metadata.value(QLatin1String("sandbox_key")).toString();
            QCOMPARE(key.size(), 32);
            QVERIFY(registry->contains(key));
            QCOMPARE(plan.value.requestPatch->kwargs.value(keys::kSandboxKey).toString(), key);
            if (viaPostHook)
                awaitFuture(interception->postAgenticLoopResponseHook(
                    J(R"j({"output":[{"type":"message","content":[]}]})j"), plan.value, {}));
            else
                awaitFuture(interception->agenticLoopCleanupHook(plan.value, {}));
        }
        QCOMPARE(registry->size(), 0);
        QCOMPARE(backend->removeCount(), 1);
        QVERIFY2(backend->liveIds.isEmpty(), "a sandbox was left running");
    }

    // LiteLLM: an await between the cache miss and the insert lets two builds create twice.
    void concurrentPlansForOneKeyCreateOneSandbox() {
        backend->deferCreates = true;
        const QJsonObject kwargs =
            J(R"j({"_code_interpreter_interception_sandbox_key":"shared-key"})j");
        const QJsonObject payload = payloadWithArguments(QStringLiteral("{\"code\":\"print(1)\"}"));
        const QFuture<Outcome<AgenticLoopPlan>> first = interception->buildAgenticLoopPlan(
            payload, QStringLiteral("gpt-5"), userMessage(), {}, kwargs);
        const QFuture<Outcome<AgenticLoopPlan>> second = interception->buildAgenticLoopPlan(
            payload, QStringLiteral("gpt-5"), userMessage(), {}, kwargs);
        // Everything here runs on this thread: draining posted events brings both builds to the
        // creation step (the second one joins the first's creation) before any sandbox exists.
        for (int i = 0; i < 50; ++i)
            QCoreApplication::processEvents();
        QVERIFY(!first.isFinished());
        QVERIFY(!second.isFinished());
        QCOMPARE(backend->pendingCreateCount(), 1);
        backend->completePendingCreates();
        const Outcome<AgenticLoopPlan> a = awaitFuture(first);
        const Outcome<AgenticLoopPlan> b = awaitFuture(second);
        QVERIFY2(a.ok(), qPrintable(a.error));
        QVERIFY2(b.ok(), qPrintable(b.error));
        QCOMPARE(backend->createCount(), 1);
        QCOMPARE(backend->runCount(), 2);
        QCOMPARE(backend->runCalls.at(0).handle, backend->runCalls.at(1).handle);
        QCOMPARE(registry->size(), 1);
    }

    // LiteLLM's Responses driver carries a forced code-tool choice into every follow-up,
    // forcing another call each round until the loop ceiling.
    void forcedCodeToolChoiceNeverReachesFollowUp_data() {
        QTest::addColumn<QString>("surface");
        QTest::addColumn<CallType>("callType");
        QTest::addColumn<QJsonObject>("clientToolChoice");
        QTest::newRow("responses, type") << QStringLiteral("responses") << CallType::AResponses
                                         << J(R"j({"type":"code_interpreter"})j");
        QTest::newRow("responses, hosted_tool")
            << QStringLiteral("responses") << CallType::AResponses
            << J(R"j({"type":"hosted_tool","name":"code_interpreter"})j");
        QTest::newRow("chat, type") << QStringLiteral("chat_completions") << CallType::ACompletion
                                    << J(R"j({"type":"code_interpreter"})j");
        QTest::newRow("chat, hosted_tool")
            << QStringLiteral("chat_completions") << CallType::ACompletion
            << J(R"j({"type":"hosted_tool","name":"code_interpreter"})j");
    }
    void forcedCodeToolChoiceNeverReachesFollowUp() {
        QFETCH(QString, surface);
        QFETCH(CallType, callType);
        QFETCH(QJsonObject, clientToolChoice);
        const bool chat = surface == QLatin1String("chat_completions");

        QJsonObject flat =
            J(R"j({"model":"gpt-5","tools":[{"type":"code_interpreter"}],"temperature":0})j");
        flat.insert(chat ? QStringLiteral("messages") : QStringLiteral("input"), userMessage());
        flat.insert(QStringLiteral("tool_choice"), clientToolChoice);
        QVERIFY(interception->preCallDeploymentHook(flat, callType));
        QVERIFY(
            CodeExecutionTool::targetsCodeInterpreter(flat.value(QLatin1String("tool_choice"))));

        const AgenticRequest request = AgenticRequest::fromFlat(flat, surface);
        const QJsonObject response =
            chat
                ? J(R"j({"choices":[{"message":{"tool_calls":[{"id":"call_1","type":"function",
                     "function":{"name":"litellm_code_execution","arguments":"{`code`:`print(1)`}"}}]}}]})j")
                : J(R"j({"output":[{"type":"function_call","call_id":"c1","name":"litellm_code_execution",
                     "arguments":"{`code`:`print(1)`}"}]})j");
        const GateDecision gate = interception->shouldRunAgenticLoop(
            response, QStringLiteral("openai"), request.hookKwargs());
        QVERIFY(gate.run);
        const Outcome<AgenticLoopPlan> plan = awaitFuture(
            interception->buildAgenticLoopPlan(gate.payload, request.model, request.messageList(),
                                               request.optionalParams, request.hookKwargs()));
        QVERIFY2(plan.ok(), qPrintable(plan.error));

        FollowUpContext context;
        context.request = request;
        context.fingerprint = AgenticFollowUp::fingerprint(gate.payload);
        const Outcome<QJsonObject> followUp =
            AgenticFollowUp::buildFollowUpRequest(plan.value, context);
        QVERIFY2(followUp.ok(), qPrintable(followUp.error));
        QVERIFY2(!followUp.value.contains(QLatin1String("tool_choice")),
                 "forced choice carried into follow-up");
        QCOMPARE(followUp.value.value(QLatin1String("temperature")), QJsonValue(0));
    }

    // LiteLLM: JSON that is not an object raises outside the parse guard and aborts the plan.
    // Each plan reports its calls to its own observer: two plans running at once (in one
    // session sandbox, as two requests of one session do) never hear each other's calls.
    void concurrentPlansReportOnlyToTheirOwnObserver() {
        backend->deferRuns = true;
        struct Heard {
            QStringList events; // "<event> <callId>"
        };
        const auto observe = [](Heard &heard) {
            PlanObserver observer;
            observer.toolCallStarting = [&heard](const QJsonObject &) {
                heard.events << QStringLiteral("starting");
            };
            observer.codeRunStarted = [&heard](const QString &, const QString &callId,
                                               const QString &) {
                heard.events << QStringLiteral("started ") + callId;
            };
            observer.codeRunOutput = [&heard](const QString &callId, const QString &,
                                              const QString &text) {
                heard.events << QStringLiteral("output ") + callId + u' ' + text;
            };
            observer.toolCallExecuted = [&heard](const QString &, const QString &callId,
                                                 const QString &, const ToolCallRun &) {
                heard.events << QStringLiteral("executed ") + callId;
            };
            return observer;
        };
        const auto payload = [](const QString &callId) {
            return QJsonObject{
                {QStringLiteral("tool_calls"),
                 QJsonArray{QJsonObject{
                     {QStringLiteral("call_id"), callId},
                     {QStringLiteral("name"), QStringLiteral("litellm_code_execution")},
                     {QStringLiteral("arguments"), QStringLiteral("{\"code\":\"print(1)\"}")}}}}};
        };
        const QJsonObject kwargs = J(R"j({"_code_interpreter_interception_sandbox_key":"shared",
                                         "_code_interpreter_interception_session_scoped":true})j");
        Heard a;
        Heard b;
        const auto planA = interception->buildAgenticLoopPlan(
            payload(QStringLiteral("a1")), QStringLiteral("gpt-5"), userMessage(), {}, kwargs, {},
            {}, observe(a));
        const auto planB = interception->buildAgenticLoopPlan(
            payload(QStringLiteral("b1")), QStringLiteral("gpt-5"), userMessage(), {}, kwargs, {},
            {}, observe(b));
        QVERIFY(QTest::qWaitFor([&] { return backend->pendingRunCount() == 2; }, 5000));
        QCOMPARE(backend->completePendingRuns(), 2);
        QVERIFY(awaitFuture(planA).ok());
        QVERIFY(awaitFuture(planB).ok());
        QCOMPARE(a.events,
                 (QStringList{QStringLiteral("starting"), QStringLiteral("started a1"),
                              QStringLiteral("output a1 42"), QStringLiteral("executed a1")}));
        QCOMPARE(b.events,
                 (QStringList{QStringLiteral("starting"), QStringLiteral("started b1"),
                              QStringLiteral("output b1 42"), QStringLiteral("executed b1")}));
    }

    // Issue 30: code runs only through the registry. A sandbox it no longer holds (deleted
    // between the plan getting it and the run) runs nothing, instead of the backend being
    // called behind the registry's back.
    void aSandboxTheRegistryDroppedRunsNothing() {
        const Outcome<SandboxEntry> container =
            awaitFuture(interception->getOrCreateContainer(QStringLiteral("k")));
        QVERIFY(container.ok());
        awaitFuture(registry->remove(QStringLiteral("k"), SandboxRemovalReason::Deleted));
        const Outcome<ToolCallRun> out = awaitFuture(interception->executeToolCall(
            container.value, QStringLiteral("{\"code\":\"print(1)\"}")));
        QVERIFY(!out.ok());
        QVERIFY2(out.error.contains(QStringLiteral("deleted before its code ran")),
                 qPrintable(out.error));
        QCOMPARE(backend->runCount(), 0);
    }

    void nonObjectArgumentsAreRefusedAndRunNothing_data() {
        QTest::addColumn<QString>("arguments");
        QTest::newRow("null") << QStringLiteral("null");
        QTest::newRow("list") << QStringLiteral("[1]");
        QTest::newRow("string") << QStringLiteral("\"x\"");
        QTest::newRow("number") << QStringLiteral("7");
        QTest::newRow("code is not a string") << QStringLiteral("{\"code\":[\"print(1)\"]}");
        QTest::newRow("truncated object") << QStringLiteral("{\"code\":\"print(1)\"");
    }
    void nonObjectArgumentsAreRefusedAndRunNothing() {
        QFETCH(QString, arguments);
        const Outcome<SandboxEntry> container =
            awaitFuture(interception->getOrCreateContainer(QStringLiteral("k")));
        QVERIFY(container.ok());
        const Outcome<ToolCallRun> out =
            awaitFuture(interception->executeToolCall(container.value, arguments));
        QVERIFY2(out.ok(), qPrintable(out.error));
        QCOMPARE(out.value.fedBack,
                 QStringLiteral("[invalid tool arguments: could not parse code]"));
        QVERIFY(!out.value.executed);
        QCOMPARE(backend->runCount(), 0);

        // Inside a whole plan: the plan still succeeds and feeds the error string back.
        const Outcome<AgenticLoopPlan> plan = awaitFuture(interception->buildAgenticLoopPlan(
            payloadWithArguments(arguments), QStringLiteral("gpt-5"), userMessage(), {},
            J(R"j({"_code_interpreter_interception_sandbox_key":"k"})j")));
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        QCOMPARE(backend->runCount(), 0);
        const QJsonArray messages = *plan.value.requestPatch->messages;
        QCOMPARE(messages.last().toObject().value(QLatin1String("output")).toString(),
                 QStringLiteral("[invalid tool arguments: could not parse code]"));
        QVERIFY(registry->contains(QStringLiteral("k"))); // not deleted: the plan did not fail
    }

    // LiteLLM pairs a null id in the assistant message with a fresh id in the tool message;
    // providers reject a tool message that answers no call.
    void chatPlanPairsToolCallIdsWhenTheModelOmitsThem() {
        const QJsonObject payload =
            J(R"j({"tool_calls":[{"id":null,"call_id":null,"arguments":"{`code`:`print(1)`}"},
                                                          {"id":"call_b","arguments":"{`code`:`print(2)`}"}]})j");
        const Outcome<AgenticLoopPlan> plan = awaitFuture(interception->buildAgenticLoopPlan(
            payload, QStringLiteral("gpt-5"), userMessage(), {},
            J(R"j({"_agentic_loop_api_surface":"chat_completions","_code_interpreter_interception_sandbox_key":"k"})j")));
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        const QJsonArray messages = *plan.value.requestPatch->messages;
        QCOMPARE(messages.size(), 4); // user, assistant, tool, tool
        const QJsonArray calls =
            messages.at(1).toObject().value(QLatin1String("tool_calls")).toArray();
        QCOMPARE(calls.size(), 2);
        const QString firstId = calls.at(0).toObject().value(QLatin1String("id")).toString();
        QVERIFY(!firstId.isEmpty());
        QCOMPARE(messages.at(2).toObject().value(QLatin1String("tool_call_id")).toString(),
                 firstId);
        QCOMPARE(calls.at(1).toObject().value(QLatin1String("id")).toString(),
                 QStringLiteral("call_b"));
        QCOMPARE(messages.at(3).toObject().value(QLatin1String("tool_call_id")).toString(),
                 QStringLiteral("call_b"));
        QCOMPARE(backend->runCount(), 2);
        QCOMPARE(backend->runCalls.at(0).code, QStringLiteral("print(1)")); // in order
        QCOMPARE(backend->runCalls.at(1).code, QStringLiteral("print(2)"));
    }

    // Shutdown with a plan in flight: its future is cancelled (never left hanging), and the
    // sandbox that arrives afterwards is still owned (and deleted) by the registry.
    // LiteLLM re-sends only the calls (without their ids) and the results: a reasoning model
    // loses its reasoning and what it said (dialects.md §2).
    void followUpReplaysTheModelsWholeTurn() {
        const QJsonObject turn = reasoningTurn();
        const Outcome<AgenticLoopPlan> plan = awaitFuture(interception->buildAgenticLoopPlan(
            payloadWithArguments(QStringLiteral("{\"code\":\"print(1)\"}")),
            QStringLiteral("gpt-5"), userMessage(), J(R"j({"tools":[]})j"),
            J(R"j({"_code_interpreter_interception_sandbox_key":"k"})j"), {}, turn));
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        const QJsonArray items = outputItems(turn);
        const QJsonArray expected{
            userMessage().first(), items.at(0), items.at(1), items.at(2),
            J(R"j({"type":"function_call_output","call_id":"c1","output":"42"})j")};
        QCOMPARE(*plan.value.requestPatch->messages, expected);
        QVERIFY(!plan.value.requestPatch->optionalParams.contains(
            QLatin1String("previous_response_id")));
    }

    // The client keeps state upstream: the follow-up chains from the answer it answers and sends
    // only the results (re-sending the input under the client's own previous_response_id
    // skipped that answer).
    void statefulFollowUpChainsFromTheAnsweredResponse_data() {
        QTest::addColumn<QJsonObject>("params");
        QTest::addColumn<QJsonValue>("previousResponseId"); // in the follow-up; undefined = none
        QTest::addColumn<int>("inputItems");
        const QJsonValue chained(QStringLiteral("resp_turn1"));
        QTest::newRow("previous_response_id")
            << J(R"j({"previous_response_id":"resp_client"})j") << chained << 1;
        QTest::newRow("store: true") << J(R"j({"store":true})j") << chained << 1;
        QTest::newRow("conversation (holds the answer already)")
            << J(R"j({"conversation":"conv_1"})j") << QJsonValue(QJsonValue::Undefined) << 1;
        QTest::newRow("stateless: the whole conversation")
            << J(R"j({"store":false})j") << QJsonValue(QJsonValue::Undefined) << 5;
    }
    void statefulFollowUpChainsFromTheAnsweredResponse() {
        QFETCH(QJsonObject, params);
        QFETCH(QJsonValue, previousResponseId);
        QFETCH(int, inputItems);
        params.insert(QStringLiteral("tools"), QJsonArray());
        const Outcome<AgenticLoopPlan> plan = awaitFuture(interception->buildAgenticLoopPlan(
            payloadWithArguments(QStringLiteral("{\"code\":\"print(1)\"}")),
            QStringLiteral("gpt-5"), userMessage(), params,
            J(R"j({"_code_interpreter_interception_sandbox_key":"k"})j"), {}, reasoningTurn()));
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        const QJsonArray input = *plan.value.requestPatch->messages;
        QCOMPARE(input.size(), inputItems);
        QCOMPARE(
            input.last(),
            QJsonValue(J(R"j({"type":"function_call_output","call_id":"c1","output":"42"})j")));

        AgenticRequest request;
        request.surface = QString(keys::kResponsesSurface);
        request.model = QStringLiteral("gpt-5");
        request.messages = userMessage();
        request.optionalParams = params;
        FollowUpContext context;
        context.request = request;
        const Outcome<QJsonObject> followUp =
            AgenticFollowUp::buildFollowUpRequest(plan.value, context);
        QVERIFY2(followUp.ok(), qPrintable(followUp.error));
        QCOMPARE(followUp.value.value(QLatin1String("previous_response_id")), previousResponseId);
        QCOMPARE(followUp.value.value(QLatin1String("input")).toArray(), input);
    }

    // Chat Completions: what the model said with its calls goes back in the assistant message;
    // provider-only fields (reasoning_content) do not.
    void chatFollowUpKeepsTheAssistantsContent() {
        const QJsonObject completion =
            J(R"j({"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,
                 "finish_reason":"tool_calls","message":{"role":"assistant",
                 "content":"Let me compute.","reasoning_content":"private",
                 "tool_calls":[{"id":"call_1","type":"function","function":{
                     "name":"litellm_code_execution","arguments":"{`code`:`print(1)`}"}}]}}]})j");
        const QJsonObject payload =
            J(R"j({"tool_calls":[{"id":"call_1","call_id":"call_1","type":"function",
                 "name":"litellm_code_execution","arguments":"{`code`:`print(1)`}"}]})j");
        const Outcome<AgenticLoopPlan> plan = awaitFuture(interception->buildAgenticLoopPlan(
            payload, QStringLiteral("gpt-5"), userMessage(), J(R"j({"tools":[]})j"),
            J(R"j({"_code_interpreter_interception_sandbox_key":"k",
                   "_agentic_loop_api_surface":"chat_completions"})j"),
            {}, completion));
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        const QJsonArray messages = *plan.value.requestPatch->messages;
        QCOMPARE(messages.size(), 3);
        QCOMPARE(messages.at(1).toObject(),
                 J(R"j({"role":"assistant","content":"Let me compute.","tool_calls":[
                     {"id":"call_1","type":"function","function":{
                         "name":"litellm_code_execution","arguments":"{`code`:`print(1)`}"}}]})j"));
    }

    // LiteLLM feeds back only "[execution error] <value>": what the code printed before it
    // failed, and where it failed, are lost. The client's logs hold no model notes either.
    void anExceptionFeedsBackStdoutAndTraceback() {
        backend->stdoutText = QStringLiteral("loaded 3 rows\n");
        const QString traceback = QStringLiteral("Traceback (most recent call last):\n"
                                                 "  File \"<cell>\", line 2, in <module>\n"
                                                 "ZeroDivisionError: division by zero\n");
        backend->executionError = ExecutionError{QStringLiteral("ZeroDivisionError"),
                                                 QStringLiteral("division by zero"), traceback};
        const Outcome<AgenticLoopPlan> plan = awaitFuture(interception->buildAgenticLoopPlan(
            payloadWithArguments(QStringLiteral("{\"code\":\"print(1)\"}")),
            QStringLiteral("gpt-5"), userMessage(), J(R"j({"tools":[]})j"),
            J(R"j({"_code_interpreter_interception_sandbox_key":"k"})j"), {}, reasoningTurn()));
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        QCOMPARE(
            plan.value.requestPatch->messages->last().toObject().value(QLatin1String("output")),
            QJsonValue(
                QString(QStringLiteral("loaded 3 rows\n[execution error] division by zero\n") +
                        traceback)));
        const QJsonObject record =
            plan.value.metadata.value(QLatin1String("code_interpreter_calls"))
                .toArray()
                .first()
                .toObject();
        QCOMPARE(record.value(QLatin1String("outputs")),
                 QJsonValue(QJsonArray{
                     QJsonObject{{QStringLiteral("type"), QStringLiteral("logs")},
                                 {QStringLiteral("logs"),
                                  QString(QStringLiteral("loaded 3 rows\n") + traceback)}}}));
    }

    void destroyingTheInterceptionCancelsAPendingPlan() {
        backend->deferCreates = true;
        const QFuture<Outcome<AgenticLoopPlan>> pending = interception->buildAgenticLoopPlan(
            payloadWithArguments(QStringLiteral("{\"code\":\"print(1)\"}")),
            QStringLiteral("gpt-5"), userMessage(), {},
            J(R"j({"_code_interpreter_interception_sandbox_key":"k"})j"));
        for (int i = 0; i < 50 && backend->pendingCreateCount() == 0; ++i)
            QCoreApplication::processEvents();
        QCOMPARE(backend->pendingCreateCount(), 1);
        interception.reset();
        QVERIFY(waitForFuture(pending));
        QVERIFY(pending.isCanceled());
        backend->completePendingCreates();
        for (int i = 0; i < 50; ++i)
            QCoreApplication::processEvents();
        QCOMPARE(backend->runCount(), 0);
        awaitFuture(registry->removeAll());
        QVERIFY(backend->liveIds.isEmpty());
    }

private:
    std::unique_ptr<SandboxRegistry> registry;
    std::unique_ptr<RecordingSandboxBackend> backend;
    std::unique_ptr<CodeInterpreterInterception> interception;
};

QTEST_GUILESS_MAIN(TestInterceptionFixes)
#include "tst_interceptionfixes.moc"
