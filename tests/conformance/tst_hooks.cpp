// Conformance: post hook, cleanup hook, and a follow-up that fails in the production driver.

#include "conformancefixture.h"
#include "loop/loopdriver.h"
#include "loop/loopfixtures.h"

#include <QTest>

using namespace loopscope;
using namespace loopscope::conformance;

class TestHooks : public QObject {
    Q_OBJECT

private slots:
    void test_post_hook_injects_code_interpreter_call_matching_openai_shape() {
        Harness h;
        const QJsonObject ciItem =
            J(R"j({"id":"ci_x","type":"code_interpreter_call","status":"completed",
                                         "code":"print(1)","container_id":"sbx_fake",
                                         "outputs":[{"type":"logs","logs":"1"}]})j");
        AgenticLoopPlan plan;
        plan.runAgenticLoop = true;
        plan.metadata = QJsonObject{{QStringLiteral("code_interpreter_calls"), QJsonArray{ciItem}}};
        const QJsonObject out = awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), plan, {}));
        // OpenAI's native ordering: the call comes before the message.
        QCOMPARE(outputTypes(out),
                 QStringList({QStringLiteral("code_interpreter_call"), QStringLiteral("message")}));
        QStringList keys = out.value(QLatin1String("output")).toArray().first().toObject().keys();
        keys.sort();
        QCOMPARE(keys, QStringList({QStringLiteral("code"), QStringLiteral("container_id"),
                                    QStringLiteral("id"), QStringLiteral("outputs"),
                                    QStringLiteral("status"), QStringLiteral("type")}));
    }

    void test_post_hook_noop_without_recorded_calls() {
        Harness h;
        AgenticLoopPlan plan;
        plan.runAgenticLoop = true;
        const QJsonObject out = awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), plan, {}));
        QCOMPARE(outputTypes(out), QStringList({QStringLiteral("message")}));
    }

    void test_sandbox_deleted_after_loop_completes() {
        Harness h;
        const Outcome<AgenticLoopPlan> plan = buildPlan(h.interception);
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        QVERIFY(h.sandbox.createCount() > 0);
        QCOMPARE(h.sandbox.removeCount(), 0); // alive until the final response is assembled
        awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), plan.value, {}));
        QCOMPARE(h.sandbox.removeCount(), 1);
        QVERIFY(!h.registry.contains(QStringLiteral("sbxkey1")));
    }

    void test_post_hook_delete_is_idempotent_across_loop_levels() {
        // Every loop level runs the post hook on the way back up: only the first deletes.
        Harness h;
        const Outcome<AgenticLoopPlan> plan = buildPlan(h.interception);
        QVERIFY(plan.ok());
        awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), plan.value, {}));
        awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), plan.value, {}));
        QCOMPARE(h.sandbox.removeCount(), 1);
    }

    void test_cleanup_hook_deletes_sandbox() {
        Harness h;
        const Outcome<AgenticLoopPlan> plan = buildPlan(h.interception);
        QVERIFY(plan.ok());
        awaitFuture(h.interception.agenticLoopCleanupHook(plan.value, {}));
        QCOMPARE(h.sandbox.removeCount(), 1);
        QVERIFY(!h.registry.contains(QStringLiteral("sbxkey1")));
    }

    void test_cleanup_hook_is_idempotent_with_post_hook() {
        Harness h;
        const Outcome<AgenticLoopPlan> plan = buildPlan(h.interception);
        QVERIFY(plan.ok());
        awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), plan.value, {}));
        awaitFuture(h.interception.agenticLoopCleanupHook(plan.value, {}));
        QCOMPARE(h.sandbox.removeCount(), 1);
    }

    void test_responses_plan_cleans_up_sandbox_when_followup_raises() {
        // LiteLLM patches litellm.aresponses to raise inside its Responses executor. Here the
        // production driver (AgenticLoop behind the proxy's interceptor) runs the plan and its
        // follow-up call fails upstream: the failure reaches the caller unchanged, no post hook
        // answer is made, and the cleanup hook deletes the plan's sandbox exactly once.
        using loopscope::test::ScriptedUpstream;
        Harness h;
        loopscope::test::LoopDriver loop(&h.interception);
        loop.upstream.enqueue(ScriptedUpstream::Response::json(
            loopfixtures::responsesFunctionCall(QStringLiteral("print(40 + 2)"))));
        loop.upstream.enqueue(ScriptedUpstream::Response::json(
            500, QByteArray(R"({"error":{"message":"upstream blew up","type":"server_error"}})")));
        const auto reply = loop.post(
            "/v1/responses",
            J(R"j({"model":"gpt-5","input":"x","tools":[{"type":"code_interpreter"}]})j"));
        QCOMPARE(reply.status, 500);
        QVERIFY(reply.json()
                    .value(QStringLiteral("error"))
                    .toObject()
                    .value(QStringLiteral("message"))
                    .toString()
                    .contains(QLatin1String("upstream blew up")));
        QVERIFY(loop.idle());
        QCOMPARE(loop.upstream.requestCount(), 2); // the first call and the failed follow-up
        QCOMPARE(h.sandbox.runCount(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(h.sandbox.removeCount(), 1, 20000);
        QCOMPARE(h.registry.size(), 0);
    }
};

QTEST_GUILESS_MAIN(TestHooks)
#include "tst_hooks.moc"
