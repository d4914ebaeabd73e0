// Conformance: post hook, cleanup hook, and the follow-up executor's failure contract.

#include "conformancefixture.h"
#include "interception/agenticfollowup.h"

#include <QTest>

using namespace loopscope;
using namespace loopscope::conformance;

namespace {

// The reference's CleanupCallback: records cleanup calls, passes responses through.
class RecordingHooks : public AgenticLoopHooks {
public:
    QList<AgenticLoopPlan> cleanupCalls;
    int postCalls = 0;

    QFuture<QJsonObject> postAgenticLoopResponseHook(const QJsonObject &response,
                                                     const AgenticLoopPlan &,
                                                     const QJsonObject &) override {
        ++postCalls;
        return QtFuture::makeReadyFuture(response);
    }
    QFuture<void> agenticLoopCleanupHook(const AgenticLoopPlan &plan,
                                         const QJsonObject &) override {
        cleanupCalls.append(plan);
        return QtFuture::makeReadyFuture();
    }
};

} // namespace

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
        // LiteLLM patches litellm.aresponses to raise inside its Responses executor; our seam
        // is AgenticFollowUp::execute with an upstream caller that fails. The failure reaches
        // the caller unchanged and cleanup runs exactly once with the plan.
        AgenticLoopPlan plan;
        plan.runAgenticLoop = true;
        AgenticLoopRequestPatch patch;
        patch.model = QStringLiteral("gpt-5");
        patch.messages = userX();
        plan.requestPatch = patch;
        plan.metadata = J(R"j({"sandbox_key":"sbxkey1"})j");

        FollowUpContext context;
        context.request.surface = str(keys::kResponsesSurface);
        context.request.model = QStringLiteral("gpt-5");
        context.depth = 0;
        context.maxLoops = 3;
        context.fingerprint = QStringLiteral("fp");

        int upstreamCalls = 0;
        const AgenticFollowUp::UpstreamCaller boom = [&upstreamCalls](const QJsonObject &) {
            ++upstreamCalls;
            return QtFuture::makeReadyFuture(
                Outcome<QJsonObject>::failure(QStringLiteral("upstream blew up")));
        };
        RecordingHooks hooks;
        QObject owner;
        const Outcome<QJsonObject> result =
            awaitFuture(AgenticFollowUp::execute(plan, context, boom, &hooks, &owner));
        QVERIFY(!result.ok());
        QVERIFY(result.error.contains(QLatin1String("upstream blew up")));
        QCOMPARE(upstreamCalls, 1);
        QCOMPARE(hooks.cleanupCalls, QList<AgenticLoopPlan>{plan});
        QCOMPARE(hooks.postCalls, 0);
    }
};

QTEST_GUILESS_MAIN(TestHooks)
#include "tst_hooks.moc"
