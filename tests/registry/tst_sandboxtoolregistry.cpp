#include "sandbox/sandboxtoolregistry.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace loopscope;

namespace {

// JSON written with single quotes for readability (moc 6.4 cannot parse raw string literals).
QJsonArray parseArray(const char *json) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray(json).replace('\'', '"'), &error);
    if (error.error != QJsonParseError::NoError || !doc.isArray())
        qFatal("bad test JSON: %s", json);
    return doc.array();
}

QJsonObject tool(const QString &name, const QJsonValue &params) {
    QJsonObject entry{{QStringLiteral("sandbox_tool_name"), name}};
    if (!params.isUndefined())
        entry.insert(QStringLiteral("litellm_params"), params);
    return entry;
}

const char kSetVar[] = "LOOPSCOPE_TST_E2B_KEY";
const char kUnsetVar[] = "LOOPSCOPE_TST_NEVER_SET_1f3a";

} // namespace

class TestSandboxToolRegistry : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        qputenv(kSetVar, "e2b_from_env_9876");
        qunsetenv(kUnsetVar);
    }
    void cleanupTestCase() { qunsetenv(kSetVar); }

    void validEntryResolves() {
        SandboxToolRegistry registry;
        const QStringList warnings = registry.registerTools(parseArray(
            "[ {'sandbox_tool_name': 'my-e2b', 'litellm_params': {'sandbox_provider': 'e2b', "
            "'api_key': 'sk-verbatim-1234', 'api_base': 'https://e2b.internal'}}]"));
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
        const auto params = registry.resolve(QStringLiteral("my-e2b"));
        QVERIFY(params.has_value());
        QCOMPARE(params->provider, QStringLiteral("e2b"));
        QCOMPARE(params->apiKey, QStringLiteral("sk-verbatim-1234"));
        QCOMPARE(params->apiBase, QStringLiteral("https://e2b.internal"));
        QVERIFY(!registry.resolve(QStringLiteral("other")).has_value());
        QVERIFY(!registry.resolve(QString()).has_value());
    }

    void invalidEntriesAreSkipped_data() {
        QTest::addColumn<QJsonValue>("entry");
        QTest::addColumn<QString>("reason");
        QTest::newRow("string entry")
            << QJsonValue(QStringLiteral("my-e2b")) << QStringLiteral("not a mapping");
        QTest::newRow("null entry") << QJsonValue() << QStringLiteral("not a mapping");
        QTest::newRow("list entry") << QJsonValue(QJsonArray{1}) << QStringLiteral("not a mapping");
        QTest::newRow("no name") << QJsonValue(QJsonObject{
                                        {QStringLiteral("litellm_params"),
                                         QJsonObject{{QStringLiteral("sandbox_provider"),
                                                      QStringLiteral("e2b")}}}})
                                 << QStringLiteral("missing sandbox_tool_name");
        QTest::newRow("empty name")
            << QJsonValue(tool(QString(), QJsonObject{{QStringLiteral("sandbox_provider"),
                                                       QStringLiteral("e2b")}}))
            << QStringLiteral("missing sandbox_tool_name");
        QTest::newRow("numeric name")
            << QJsonValue(QJsonObject{
                   {QStringLiteral("sandbox_tool_name"), 5},
                   {QStringLiteral("litellm_params"),
                    QJsonObject{{QStringLiteral("sandbox_provider"), QStringLiteral("e2b")}}}})
            << QStringLiteral("missing sandbox_tool_name");
        QTest::newRow("no litellm_params")
            << QJsonValue(tool(QStringLiteral("t"), QJsonValue(QJsonValue::Undefined)))
            << QStringLiteral("litellm_params has no sandbox_provider");
        QTest::newRow("null litellm_params")
            << QJsonValue(tool(QStringLiteral("t"), QJsonValue()))
            << QStringLiteral("litellm_params has no sandbox_provider");
        QTest::newRow("litellm_params not a mapping")
            << QJsonValue(tool(QStringLiteral("t"), QStringLiteral("e2b")))
            << QStringLiteral("litellm_params is not a mapping");
        QTest::newRow("no provider")
            << QJsonValue(tool(QStringLiteral("t"),
                               QJsonObject{{QStringLiteral("api_key"), QStringLiteral("sk-abc")}}))
            << QStringLiteral("litellm_params has no sandbox_provider");
    }
    void invalidEntriesAreSkipped() {
        QFETCH(QJsonValue, entry);
        QFETCH(QString, reason);
        SandboxToolRegistry registry;
        const QJsonObject good =
            tool(QStringLiteral("good"),
                 QJsonObject{{QStringLiteral("sandbox_provider"), QStringLiteral("local")}});
        const QString expected = QStringLiteral("sandbox_tools[0]: skipped: ") + reason;
        QTest::ignoreMessage(QtWarningMsg, qPrintable(expected));
        const QStringList warnings = registry.registerTools(QJsonArray{entry, good});
        QCOMPARE(warnings, QStringList{expected});
        QCOMPARE(registry.names(), QStringList{QStringLiteral("good")});
        QCOMPARE(registry.resolve(QStringLiteral("good"))->provider, QStringLiteral("local"));
        QCOMPARE(SandboxToolRegistry::entryProblem(entry), reason);
        QVERIFY(SandboxToolRegistry::entryProblem(good).isEmpty());
    }

    void nonStringCredentialsBecomeEmpty() {
        SandboxToolRegistry registry;
        const QStringList warnings = registry.registerTools(
            parseArray("[ {'sandbox_tool_name': 't', 'litellm_params': {'sandbox_provider': 'e2b', "
                       "'api_key': 12345, 'api_base': ['https://x']}}]"));
        QVERIFY(warnings.isEmpty());
        const auto params = registry.resolve(QStringLiteral("t"));
        QVERIFY(params.has_value());
        QCOMPARE(params->apiKey, QString());
        QCOMPARE(params->apiBase, QString());
    }

    void environmentReferencesResolve() {
        SandboxToolRegistry registry;
        const QJsonArray tools{
            tool(QStringLiteral("t"),
                 QJsonObject{{QStringLiteral("sandbox_provider"), QStringLiteral("e2b")},
                             {QStringLiteral("api_key"),
                              QString(QStringLiteral("os.environ/") + QLatin1String(kSetVar))},
                             {QStringLiteral("api_base"),
                              QString(QStringLiteral("os.environ/") + QLatin1String(kUnsetVar))}})};
        const QString expected =
            QStringLiteral("sandbox_tools[0] (t): api_base refers to unset environment variable "
                           "'%1'")
                .arg(QLatin1String(kUnsetVar));
        QTest::ignoreMessage(QtWarningMsg, qPrintable(expected));
        const QStringList warnings = registry.registerTools(tools);
        QCOMPARE(warnings, QStringList{expected});
        const auto params = registry.resolve(QStringLiteral("t"));
        QVERIFY(params.has_value());
        QCOMPARE(params->apiKey, QStringLiteral("e2b_from_env_9876"));
        QCOMPARE(params->apiBase, QString());
        // Secrets stay out of warnings and descriptions.
        QVERIFY(!warnings.join(u' ').contains(QStringLiteral("e2b_from_env")));
        QCOMPARE(registry.describe(QStringLiteral("t")),
                 QStringLiteral("t: provider e2b, api_key ****9876, api_base (default)"));
    }

    void emptyEnvironmentReferenceWarns() {
        SandboxToolRegistry registry;
        QTest::ignoreMessage(QtWarningMsg,
                             QRegularExpression(QStringLiteral("api_key refers to unset")));
        const QStringList warnings = registry.registerTools(QJsonArray{
            tool(QStringLiteral("t"),
                 QJsonObject{{QStringLiteral("sandbox_provider"), QStringLiteral("e2b")},
                             {QStringLiteral("api_key"), QStringLiteral("os.environ/")}})});
        QCOMPARE(warnings.size(), 1);
        QCOMPARE(registry.resolve(QStringLiteral("t"))->apiKey, QString());
    }

    void registerReplacesWholeRegistry() {
        SandboxToolRegistry registry;
        registry.registerTools(
            parseArray("[ {'sandbox_tool_name': 'a', 'litellm_params': {'sandbox_provider': 'e2b', "
                       "'api_key': 'k-a'}}, {'sandbox_tool_name': 'b', 'litellm_params': "
                       "{'sandbox_provider': 'local'}}]"));
        QCOMPARE(registry.names(), (QStringList{QStringLiteral("a"), QStringLiteral("b")}));
        registry.registerTools(parseArray(
            "[ {'sandbox_tool_name': 'c', 'litellm_params': {'sandbox_provider': 'jupyter'}}]"));
        QCOMPARE(registry.names(), QStringList{QStringLiteral("c")});
        QVERIFY(!registry.resolve(QStringLiteral("a")).has_value()); // credentials dropped
        // An all-invalid list also replaces (empties) the registry.
        QTest::ignoreMessage(QtWarningMsg, "sandbox_tools[0]: skipped: not a mapping");
        registry.registerTools(QJsonArray{42});
        QCOMPARE(registry.size(), 0);
        registry.registerTools(parseArray(
            "[ {'sandbox_tool_name': 'd', 'litellm_params': {'sandbox_provider': 'e2b'}}]"));
        registry.clear();
        QCOMPARE(registry.size(), 0);
        QVERIFY(!registry.resolve(QStringLiteral("d")).has_value());
    }

    void duplicateNamesLastWins() {
        SandboxToolRegistry registry;
        QTest::ignoreMessage(QtWarningMsg,
                             "sandbox_tools[1] (t): duplicate sandbox_tool_name, this entry wins");
        registry.registerTools(parseArray(
            "[ {'sandbox_tool_name': 't', 'litellm_params': {'sandbox_provider': 'e2b'}}, "
            "{'sandbox_tool_name': 't', 'litellm_params': {'sandbox_provider': 'local'}}]"));
        QCOMPARE(registry.resolve(QStringLiteral("t"))->provider, QStringLiteral("local"));
    }

    void maskSecret_data() {
        QTest::addColumn<QString>("secret");
        QTest::addColumn<QString>("masked");
        QTest::newRow("empty") << QString() << QStringLiteral("(none)");
        QTest::newRow("short") << QStringLiteral("abcd") << QStringLiteral("****");
        QTest::newRow("long") << QStringLiteral("sk-secret-4321") << QStringLiteral("****4321");
    }
    void maskSecret() {
        QFETCH(QString, secret);
        QFETCH(QString, masked);
        QCOMPARE(SandboxToolRegistry::maskSecret(secret), masked);
    }
};

QTEST_GUILESS_MAIN(TestSandboxToolRegistry)
#include "tst_sandboxtoolregistry.moc"
