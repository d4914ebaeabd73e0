// Conformance: sticky sessions (metadata.session_id → one sandbox across requests).

#include "conformancefixture.h"

#include <QTest>

using namespace loopscope;
using namespace loopscope::conformance;

namespace {

QJsonObject sessionKwargs(const QString &callId, const QString &sessionKey) {
    return QJsonObject{{QStringLiteral("litellm_call_id"), callId},
                       {str(keys::kSandboxKey), sessionKey},
                       {str(keys::kSessionScoped), true}};
}

} // namespace

class TestSessions : public QObject {
    Q_OBJECT

private slots:
    void test_pre_call_uses_session_id_from_metadata_as_sandbox_key() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"openai","metadata":{"session_id":"conv-abc-123"}})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::ACompletion));
        QCOMPARE(kwargs.value(keys::kSandboxKey), QJsonValue(QStringLiteral("conv-abc-123")));
        QCOMPARE(kwargs.value(keys::kSessionScoped), QJsonValue(true));
        const QJsonObject metadata = kwargs.value(keys::kLitellmMetadata).toObject();
        QCOMPARE(metadata.value(keys::kSandboxKey), QJsonValue(QStringLiteral("conv-abc-123")));
        QCOMPARE(metadata.value(keys::kSessionScoped), QJsonValue(true));
    }

    void test_pre_call_uses_session_id_from_litellm_metadata() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"openai","litellm_metadata":{"session_id":"sess-xyz-789"}})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::ACompletion));
        QCOMPARE(kwargs.value(keys::kSandboxKey), QJsonValue(QStringLiteral("sess-xyz-789")));
        QCOMPARE(kwargs.value(keys::kSessionScoped), QJsonValue(true));
    }

    void test_pre_call_without_session_id_still_mints_random_key() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"openai"})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::ACompletion));
        QVERIFY(!kwargs.contains(keys::kSessionScoped) ||
                kwargs.value(keys::kSessionScoped) == QJsonValue(false));
        QVERIFY(kwargs.value(keys::kSandboxKey).toString().size() >= 16);
    }

    void test_session_scoped_sandbox_survives_agentic_loop_cleanup() {
        // A session sandbox outlives one loop: the next request in the session needs it.
        Harness h;
        const Outcome<AgenticLoopPlan> plan = buildPlan(
            h.interception, sessionKwargs(QStringLiteral("k1"), QStringLiteral("conv-persist-me")),
            payloadWithCall(QStringLiteral("x = 10")));
        QVERIFY2(plan.ok(), qPrintable(plan.error));
        QCOMPARE(plan.value.metadata.value(QLatin1String("is_session_scoped")), QJsonValue(true));
        awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), plan.value, {}));
        awaitFuture(h.interception.agenticLoopCleanupHook(plan.value, {}));
        QCOMPARE(h.sandbox.removeCount(), 0);
        QVERIFY(h.registry.contains(QStringLiteral("conv-persist-me")));
    }

    void test_session_scoped_sandbox_reused_across_sequential_requests() {
        Harness h;
        const QJsonObject payload = payloadWithCall(QStringLiteral("print(1)"));
        const Outcome<AgenticLoopPlan> first = buildPlan(
            h.interception, sessionKwargs(QStringLiteral("req1"), QStringLiteral("conv-reuse-me")),
            payload);
        QVERIFY(first.ok());
        awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), first.value, {}));
        const Outcome<AgenticLoopPlan> second = buildPlan(
            h.interception, sessionKwargs(QStringLiteral("req2"), QStringLiteral("conv-reuse-me")),
            payload);
        QVERIFY(second.ok());
        awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), second.value, {}));
        // Two creates would mean interpreter state cannot persist between requests.
        QCOMPARE(h.sandbox.createCount(), 1);
        QCOMPARE(h.sandbox.removeCount(), 0);
    }

    void test_non_session_sandbox_still_deleted_after_loop() {
        Harness h;
        const Outcome<AgenticLoopPlan> plan = buildPlan(h.interception);
        QVERIFY(plan.ok());
        awaitFuture(
            h.interception.postAgenticLoopResponseHook(messageOnlyResponse(), plan.value, {}));
        QCOMPARE(h.sandbox.removeCount(), 1);
    }

    void test_sandbox_key_scoped_to_api_key_hash_isolates_users() {
        // Same session id from two API keys: two keys, or one tenant reaches the other's state.
        Harness h;
        QJsonObject a = J(R"j({"tools":[{"type":"code_interpreter"}],"custom_llm_provider":"openai",
                              "metadata":{"session_id":"same-session-id"},"user_api_key_hash":"hash-for-tenant-a"})j");
        QJsonObject b = J(R"j({"tools":[{"type":"code_interpreter"}],"custom_llm_provider":"openai",
                              "metadata":{"session_id":"same-session-id"},"user_api_key_hash":"hash-for-tenant-b"})j");
        QVERIFY(h.interception.preCallDeploymentHook(a, CallType::ACompletion));
        QVERIFY(h.interception.preCallDeploymentHook(b, CallType::ACompletion));
        const QString keyA = a.value(keys::kSandboxKey).toString();
        const QString keyB = b.value(keys::kSandboxKey).toString();
        QVERIFY(keyA != keyB);
        QVERIFY(keyA.contains(QLatin1String("hash-for-tenant-a")));
        QVERIFY(keyB.contains(QLatin1String("hash-for-tenant-b")));
    }

    void test_per_identity_cap_evicts_lru_session() {
        // Rotating session ids must not grow sandboxes without bound: the least recently used
        // one is evicted and deleted.
        Harness h(InterceptionSettings{}, QStringLiteral("ok"));
        const QString identity = QStringLiteral("hash-for-identity-x");
        const int cap = SandboxRegistry::kSessionCapPerIdentity;
        for (int i = 0; i < cap; ++i) {
            const QString key = identity + QStringLiteral(":session-") + QString::number(i);
            QVERIFY(awaitFuture(h.interception.getOrCreateContainer(key, identity)).ok());
            h.registry.setLastAccessed(key, qint64(i));
        }
        QCOMPARE(h.registry.size(), cap);
        QVERIFY(awaitFuture(h.interception.getOrCreateContainer(
                                identity + QStringLiteral(":session-new"), identity))
                    .ok());
        QCOMPARE(h.registry.size(), cap);
        QVERIFY(!h.registry.contains(identity + QStringLiteral(":session-0")));
        QCOMPARE(h.sandbox.removeCount(), 1);
    }
};

QTEST_GUILESS_MAIN(TestSessions)
#include "tst_sessions.moc"
