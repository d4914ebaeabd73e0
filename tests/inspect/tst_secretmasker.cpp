#include "inspect/secretmasker.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using loopscope::SecretMasker;

class TestSecretMasker : public QObject {
    Q_OBJECT
private slots:
    void mask_data() {
        QTest::addColumn<QString>("secret");
        QTest::addColumn<QString>("expected");
        const QChar e(0x2026);
        QTest::newRow("long key") << QStringLiteral("sk-proj-abcdef123456")
                                  << e + QStringLiteral("3456");
        QTest::newRow("exactly eight") << QStringLiteral("abcd9876") << e + QStringLiteral("9876");
        QTest::newRow("short key hides everything") << QStringLiteral("abc1234") << QString(e);
        QTest::newRow("empty") << QString() << QString(e);
    }
    void mask() {
        QFETCH(QString, secret);
        QFETCH(QString, expected);
        QCOMPARE(SecretMasker::mask(secret), expected);
    }

    void keepsAuthorizationScheme() {
        QCOMPARE(SecretMasker::maskAuthorization(QStringLiteral("Bearer sk-test-00001111")),
                 QStringLiteral("Bearer ") + QChar(0x2026) + QStringLiteral("1111"));
        // A key before the first space is no scheme: masked whole (found by fuzz_har).
        QCOMPARE(SecretMasker::maskAuthorization(
                     QStringLiteral("sk-proj-0123456789abcdefghij trailing")),
                 QChar(0x2026) + QStringLiteral("ling"));
        QCOMPARE(SecretMasker::maskAuthorization(QStringLiteral("Bearer//////////////// x")),
                 QChar(0x2026) + QStringLiteral("// x"));
    }

    void masksNestedSecretFields() {
        const QJsonObject in{
            {QStringLiteral("model"), QStringLiteral("gpt-5")},
            {QStringLiteral("api_key"), QStringLiteral("sk-secret-value-9999")},
            {QStringLiteral("nested"),
             QJsonObject{{QStringLiteral("Authorization"), QStringLiteral("Bearer-xyz-8888")}}},
            {QStringLiteral("list"), QJsonArray{QJsonObject{{QStringLiteral("openai_api_key"),
                                                             QStringLiteral("k-77776666")}}}},
        };
        const QJsonObject out = SecretMasker::maskJson(in);
        const QByteArray text = QJsonDocument(out).toJson(QJsonDocument::Compact);
        QVERIFY(!text.contains("sk-secret-value"));
        QVERIFY(!text.contains("Bearer-xyz"));
        QVERIFY(!text.contains("k-7777"));
        QVERIFY(text.contains("9999"));
        QCOMPARE(out.value(QStringLiteral("model")).toString(), QStringLiteral("gpt-5"));
    }

    // Only the secrets change, at any depth (arrays in arrays, a secret key over an object);
    // the caller's object is not touched, and one without secrets comes back equal.
    void changesOnlyTheSecretsAndNotTheInput() {
        const auto parse = [](const char *json) {
            return QJsonDocument::fromJson(QByteArray(json)).object();
        };
        const QJsonObject in = parse(
            R"({"model":"m","input":[[{"type":"x","token":"tok-12345678"}],"plain",[1,2]],)"
            R"("token":{"api_key":"abcdefgh1234","n":1},"tools":[{"type":"code_interpreter"}],)"
            R"("meta":{"deep":{"x_api_key":"short","keep":"sk-not-a-key-name"}}})");
        const QByteArray before = QJsonDocument(in).toJson();
        // "@" stands for the mask's ellipsis.
        const QJsonObject expected = parse(
            QByteArray(R"({"model":"m","input":[[{"type":"x","token":"@5678"}],"plain",[1,2]],)"
                       R"("token":{"api_key":"@1234","n":1},"tools":[{"type":"code_interpreter"}],)"
                       R"("meta":{"deep":{"x_api_key":"@","keep":"sk-not-a-key-name"}}})")
                .replace("@", QString(QChar(0x2026)).toUtf8())
                .constData());
        QCOMPARE(SecretMasker::maskJson(in), expected);
        QCOMPARE(QJsonDocument(in).toJson(), before);
        const QJsonObject clean = parse(R"({"a":[{"b":[{"c":"d"}]}],"e":{"f":1}})");
        QCOMPARE(SecretMasker::maskJson(clean), clean);
    }
};

QTEST_GUILESS_MAIN(TestSecretMasker)
#include "tst_secretmasker.moc"
