// Conformance: plan building, running one tool call, and the sandbox helpers
// (_create_container, _run_code, _delete_container, _prune_expired_cache, ...).

#include "conformancefixture.h"
#include "sandbox/sandboxtoolregistry.h"

#include <QSignalSpy>
#include <QTest>

using namespace loopscope;
using namespace loopscope::conformance;

class TestBuildPlan : public QObject {
    Q_OBJECT

private slots:
    void test_build_plan_runs_code_and_feeds_output_back() {
        Harness h;
        const Outcome<AgenticLoopPlan> plan = buildPlan(h.interception);
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        QVERIFY(h.sandbox.runCount() > 0);
        QCOMPARE(h.sandbox.runCalls.first().code, QStringLiteral("print(40 + 2)"));
        QJsonObject output;
        for (const QJsonValue &m : planMessages(plan.value)) {
            const QJsonObject item = m.toObject();
            if (item.value(QLatin1String("type")).toString() ==
                    QLatin1String("function_call_output") &&
                item.value(QLatin1String("call_id")).toString() == QLatin1String("c1"))
                output = item;
        }
        QVERIFY2(!output.isEmpty(), "no function_call_output for c1");
        QVERIFY(output.value(QLatin1String("output")).toString().contains(QLatin1String("42")));
    }

    void test_container_reused_within_request_via_server_sandbox_key() {
        Harness h;
        const QJsonObject kwargs = J(R"j({"litellm_call_id":"k1",
                                         "_code_interpreter_interception_sandbox_key":"server-nonce-1"})j");
        QVERIFY(buildPlan(h.interception, kwargs).ok());
        QVERIFY(buildPlan(h.interception, kwargs).ok());
        QCOMPARE(h.sandbox.createCount(), 1); // one sandbox for every round of one request
    }

    void test_colliding_caller_call_id_does_not_share_sandbox() {
        // Same client-chosen call id, different server keys: separate sandboxes, or one
        // caller could read another's interpreter state.
        Harness h;
        const QJsonObject payload = payloadWithCall(QStringLiteral("print(1)"));
        QVERIFY(
            buildPlan(
                h.interception,
                J(R"j({"litellm_call_id":"shared","_code_interpreter_interception_sandbox_key":"nonce-A"})j"),
                payload)
                .ok());
        QVERIFY(
            buildPlan(
                h.interception,
                J(R"j({"litellm_call_id":"shared","_code_interpreter_interception_sandbox_key":"nonce-B"})j"),
                payload)
                .ok());
        QCOMPARE(h.sandbox.createCount(), 2);
    }

    void test_build_plan_records_code_interpreter_call_metadata() {
        Harness h;
        const Outcome<AgenticLoopPlan> plan = buildPlan(h.interception);
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        const QJsonArray calls =
            plan.value.metadata.value(QLatin1String("code_interpreter_calls")).toArray();
        QVERIFY(!calls.isEmpty());
        const QJsonObject call = calls.first().toObject();
        QCOMPARE(call.value(QLatin1String("code")).toString(), QStringLiteral("print(40 + 2)"));
        QCOMPARE(call.value(QLatin1String("container_id")).toString(), QStringLiteral("sbx_fake"));
        QCOMPARE(call.value(QLatin1String("type")).toString(),
                 QStringLiteral("code_interpreter_call"));
        QCOMPARE(call.value(QLatin1String("status")).toString(), QStringLiteral("completed"));
        // A logs array (never null) so clients iterating outputs keep working.
        QCOMPARE(call.value(QLatin1String("outputs")),
                 QJsonValue(QJsonArray{J(R"j({"type":"logs","logs":"42"})j")}));
    }

    void test_build_plan_outputs_empty_array_when_no_stdout() {
        Harness h({}, QString());
        const Outcome<AgenticLoopPlan> plan = buildPlan(
            h.interception,
            J(R"j({"litellm_call_id":"k1","_code_interpreter_interception_sandbox_key":"sbxkey1"})j"),
            payloadWithCall(QStringLiteral("pass")));
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        const QJsonValue outputs =
            plan.value.metadata.value(QLatin1String("code_interpreter_calls"))
                .toArray()
                .first()
                .toObject()
                .value(QLatin1String("outputs"));
        QVERIFY(outputs.isArray());
        QCOMPARE(outputs.toArray().size(), 0);
    }

    void test_chat_completion_build_plan_runs_code_and_appends_tool_message() {
        Harness h;
        const QJsonObject payload =
            J(R"j({"tool_calls":[{"id":"call_1","name":"litellm_code_execution",
                                                          "arguments":"{`code`:`print(40 + 2)`}"}]})j");
        const QJsonObject optionalParams =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                                 "tool_choice":{"type":"code_interpreter","container":{"type":"auto"}},
                                                 "temperature":0})j");
        const QJsonObject kwargs = J(R"j({"acompletion":true,"litellm_call_id":"k1",
                                         "_code_interpreter_interception_active":true,
                                         "_code_interpreter_interception_sandbox_key":"sbxkey1",
                                         "_code_interpreter_interception_converted_stream":true,
                                         "_agentic_loop_api_surface":"chat_completions"})j");
        const Outcome<AgenticLoopPlan> plan = awaitFuture(h.interception.buildAgenticLoopPlan(
            payload, QStringLiteral("gpt-5"), userX(), optionalParams, kwargs));
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        QCOMPARE(h.sandbox.runCalls.first().code, QStringLiteral("print(40 + 2)"));

        QVERIFY(plan.value.requestPatch.has_value());
        const AgenticLoopRequestPatch &patch = *plan.value.requestPatch;
        const QJsonObject expectedTool = J(R"j({"type":"function","function":{
            "name":"litellm_code_execution",
            "description":"Execute python code in a sandbox and return stdout.",
            "parameters":{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}}})j");
        QCOMPARE(patch.tools, std::optional<QJsonArray>(QJsonArray{expectedTool}));
        QCOMPARE(patch.optionalParams, J(R"j({"temperature":0})j"));
        QCOMPARE(patch.kwargs, J(R"j({"litellm_call_id":"k1",
                                     "_code_interpreter_interception_active":true,
                                     "_code_interpreter_interception_sandbox_key":"sbxkey1",
                                     "_code_interpreter_interception_converted_stream":true,
                                     "_agentic_loop_api_surface":"chat_completions"})j"));
        const QJsonArray messages = planMessages(plan.value);
        QVERIFY(messages.size() >= 2);
        const QJsonObject assistant = messages.at(messages.size() - 2).toObject();
        QCOMPARE(assistant.value(QLatin1String("role")).toString(), QStringLiteral("assistant"));
        QCOMPARE(assistant.value(QLatin1String("tool_calls"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QLatin1String("id")),
                 QJsonValue(QStringLiteral("call_1")));
        QCOMPARE(messages.last().toObject(),
                 J(R"j({"role":"tool","tool_call_id":"call_1","content":"42"})j"));
        QCOMPARE(plan.value.metadata.value(QLatin1String("code_interpreter_calls"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QLatin1String("code"))
                     .toString(),
                 QStringLiteral("print(40 + 2)"));
    }

    void test_build_plan_deletes_sandbox_when_execution_raises() {
        // An infrastructure failure mid-plan (e.g. output over the cap) must not leave the
        // sandbox running until the TTL.
        Harness h;
        h.sandbox.failRun = true;
        h.sandbox.runError = QStringLiteral("output exceeded cap");
        const Outcome<AgenticLoopPlan> plan = buildPlan(h.interception);
        QVERIFY(!plan.ok());
        QVERIFY(plan.error.contains(QLatin1String("exceeded cap")));
        QCOMPARE(h.sandbox.createCount(), 1);
        QCOMPARE(h.sandbox.removeCount(), 1);
        QVERIFY(!h.registry.contains(QStringLiteral("sbxkey1")));
    }

    void test_build_plan_handles_dict_shaped_response() {
        // Our responses are always JSON maps, i.e. the reference's dict shape: detection,
        // execution and re-injection chained end to end.
        Harness h;
        const QJsonObject response = responsesWith({functionCallItem()});
        const QJsonObject payload{
            {QStringLiteral("tool_calls"),
             CodeInterpreterInterception::extractCodeExecutionToolCalls(response)}};
        const Outcome<AgenticLoopPlan> plan = buildPlan(
            h.interception,
            J(R"j({"litellm_call_id":"k1","_code_interpreter_interception_sandbox_key":"sbxkey1"})j"),
            payload);
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        QVERIFY(h.sandbox.runCount() > 0);
        QCOMPARE(plan.value.metadata.value(QLatin1String("code_interpreter_calls"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QLatin1String("code"))
                     .toString(),
                 QStringLiteral("print(40 + 2)"));
        const QJsonObject out = awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), plan.value, {}));
        QCOMPARE(outputTypes(out),
                 QStringList({QStringLiteral("code_interpreter_call"), QStringLiteral("message")}));
    }

    void test_run_code_does_not_re_resolve_registry() {
        // Params resolved at creation are reused for runs: clearing sandbox_tools in between
        // must not turn a created sandbox into a failure.
        SandboxToolRegistry tools;
        tools.registerTools(QJsonArray{J(R"j({"sandbox_tool_name":"e2b_default",
                                              "litellm_params":{"sandbox_provider":"e2b","api_key":"sk-x"}})j")});
        SandboxRegistry registry;
        RecordingSandboxBackend e2b;
        e2b.providerName = QStringLiteral("e2b");
        e2b.stdoutText = QStringLiteral("ok");
        InterceptionSettings settings;
        settings.sandboxToolName = QStringLiteral("e2b_default");
        CodeInterpreterInterception interception(settings, &registry, &tools,
                                                 {{QStringLiteral("e2b"), &e2b}});

        const Outcome<SandboxEntry> container =
            awaitFuture(interception.getOrCreateContainer(QStringLiteral("k1")));
        QVERIFY2(container.ok(), qPrintable(container.error));
        QVERIFY(container.value.params.has_value());
        QCOMPARE(container.value.params->provider, QStringLiteral("e2b"));
        QCOMPARE(e2b.createCalls.first().params.apiKey, QStringLiteral("sk-x"));

        tools.clear();
        const Outcome<ToolCallRun> ran = awaitFuture(interception.executeToolCall(
            container.value, QStringLiteral("{\"code\":\"print(1)\"}")));
        QVERIFY2(ran.ok(), qPrintable(ran.error));
        QCOMPARE(ran.value.fedBack, QStringLiteral("ok"));
        QCOMPARE(e2b.runCalls.first().params.provider, QStringLiteral("e2b"));
        awaitFuture(registry.removeAll());
    }

    void test_run_tool_call_surfaces_execution_error() {
        // The model sees a labelled error string instead of the loop failing.
        Harness h;
        h.sandbox.stdoutText.clear();
        h.sandbox.executionError =
            ExecutionError{QStringLiteral("ValueError"), QStringLiteral("boom"), {}};
        const Outcome<SandboxEntry> container =
            awaitFuture(h.interception.getOrCreateContainer(QStringLiteral("k1")));
        QVERIFY(container.ok());
        const Outcome<ToolCallRun> out = awaitFuture(h.interception.executeToolCall(
            container.value, QStringLiteral("{\"code\":\"raise ValueError(1)\"}")));
        QVERIFY2(out.ok(), qPrintable(out.error));
        QCOMPARE(out.value.fedBack, QStringLiteral("[execution error] boom"));
        QVERIFY(out.value.executed);
    }

    void test_run_tool_call_reports_unparseable_arguments() {
        Harness h;
        const Outcome<SandboxEntry> container =
            awaitFuture(h.interception.getOrCreateContainer(QStringLiteral("k1")));
        QVERIFY(container.ok());
        const Outcome<ToolCallRun> out = awaitFuture(
            h.interception.executeToolCall(container.value, QStringLiteral("not-json")));
        QVERIFY(out.ok());
        QCOMPARE(out.value.fedBack,
                 QStringLiteral("[invalid tool arguments: could not parse code]"));
        QVERIFY(!out.value.executed);
        QCOMPARE(h.sandbox.runCount(), 0); // nothing ran
    }

    void test_create_container_without_sandbox_raises() {
        // Registry path with an unresolvable tool name: a clear error, not a silent nothing.
        SandboxRegistry registry;
        SandboxToolRegistry tools;
        InterceptionSettings settings;
        settings.sandboxToolName = QStringLiteral("missing");
        CodeInterpreterInterception interception(settings, &registry, &tools, {});
        const Outcome<SandboxEntry> created =
            awaitFuture(interception.getOrCreateContainer(QStringLiteral("k1")));
        QVERIFY(!created.ok());
        QVERIFY(created.error.contains(QLatin1String("no sandbox available")));
        QCOMPARE(registry.size(), 0);
    }

    void test_run_code_without_params_raises() {
        SandboxRegistry registry;
        SandboxToolRegistry tools;
        InterceptionSettings settings;
        settings.sandboxToolName = QStringLiteral("missing");
        CodeInterpreterInterception interception(settings, &registry, &tools, {});
        SandboxEntry container;
        container.handle.id = QStringLiteral("sbx_fake");
        const Outcome<ExecutionResult> ran =
            awaitFuture(interception.runCode(container, QStringLiteral("print(1)")));
        QVERIFY(!ran.ok());
        QVERIFY(ran.error.contains(QLatin1String("no sandbox available to run code")));
    }

    void test_delete_container_swallows_errors() {
        // The request already succeeded: a failing delete is reported, never propagated.
        Harness h;
        h.sandbox.failRemove = true;
        h.sandbox.removeError = QStringLiteral("e2b unreachable");
        QSignalSpy failed(&h.registry, &SandboxRegistry::sandboxRemoveFailed);
        QVERIFY(awaitFuture(h.interception.getOrCreateContainer(QStringLiteral("k1"))).ok());
        const QFuture<void> deletion = h.interception.deleteContainerForKey(QStringLiteral("k1"));
        QVERIFY(waitForFuture(deletion));
        QVERIFY(!h.registry.contains(QStringLiteral("k1")));
        QVERIFY(!deletion.isCanceled());
        QCOMPARE(h.sandbox.removeCount(), 1);
        QCOMPARE(failed.count(), 1);
        h.sandbox.failRemove = false;
    }

    void test_prune_expired_cache_deletes_underlying_container() {
        // An expired entry must have its sandbox deleted, not just forgotten.
        Harness h;
        QVERIFY(awaitFuture(h.interception.getOrCreateContainer(QStringLiteral("old"))).ok());
        h.registry.setLastAccessed(QStringLiteral("old"),
                                   h.registry.now() - SandboxRegistry::kIdleTtlMs - 1000);
        awaitFuture(h.interception.pruneExpiredCache());
        QVERIFY(!h.registry.contains(QStringLiteral("old")));
        QCOMPARE(h.sandbox.removeCount(), 1);
    }

    void test_normalize_messages_handles_str_and_unknown() {
        QCOMPARE(CodeInterpreterInterception::normalizeMessages(QJsonValue(QStringLiteral("hi"))),
                 QJsonArray{J(R"j({"role":"user","content":"hi"})j")});
        QCOMPARE(
            CodeInterpreterInterception::normalizeMessages(QJsonArray{J(R"j({"role":"user"})j")}),
            QJsonArray{J(R"j({"role":"user"})j")});
        QCOMPARE(CodeInterpreterInterception::normalizeMessages(QJsonValue(42)), QJsonArray());
    }
};

QTEST_GUILESS_MAIN(TestBuildPlan)
#include "tst_buildplan.moc"
