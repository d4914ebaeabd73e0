#include "inspect/credentialpolicy.h"
#include "inspect/eventbus.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>

using loopscope::CredentialPolicy;
using loopscope::EventBus;
using loopscope::InspectorEvent;

namespace {

const QChar kEllipsis(0x2026);

QString masked(const char *last4) {
    return kEllipsis + QLatin1String(last4);
}

// A configured key that no format matches: only the registered value can find it.
const QString kConfigured = QStringLiteral("cfg-0123456789abcdefWXYZ");
// A configured value with characters a word has not.
const QString kDotted = QStringLiteral("dotted.secret.value.42");

} // namespace

class TestCredentialPolicy : public QObject {
    Q_OBJECT
private slots:
    void mask_data() {
        QTest::addColumn<QString>("secret");
        QTest::addColumn<QString>("expected");
        QTest::newRow("long key") << QStringLiteral("sk-proj-abcdef123456") << masked("3456");
        QTest::newRow("exactly eight") << QStringLiteral("abcd9876") << masked("9876");
        QTest::newRow("short key hides everything")
            << QStringLiteral("abc1234") << QString(kEllipsis);
        QTest::newRow("empty") << QString() << QString(kEllipsis);
    }
    void mask() {
        QFETCH(QString, secret);
        QFETCH(QString, expected);
        QCOMPARE(CredentialPolicy::mask(secret), expected);
    }

    void keepsAuthorizationScheme() {
        QCOMPARE(CredentialPolicy::maskAuthorization(QStringLiteral("Bearer sk-test-00001111")),
                 QStringLiteral("Bearer ") + masked("1111"));
        // A key before the first space is no scheme: masked whole (found by fuzz_har).
        QCOMPARE(CredentialPolicy::maskAuthorization(
                     QStringLiteral("sk-proj-0123456789abcdefghij trailing")),
                 masked("ling"));
        QCOMPARE(CredentialPolicy::maskAuthorization(QStringLiteral("Bearer//////////////// x")),
                 masked("// x"));
    }

    // Every format and every registered value, wherever it stands in a text; ordinary words
    // that look a little like keys stay.
    void maskText_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("openai") << QStringLiteral("key=sk-proj-AbCdEfGhIjKlMnOpQrSt1234 ok")
                                << QStringLiteral("key=") + masked("1234") + QStringLiteral(" ok");
        QTest::newRow("anthropic")
            << QStringLiteral("x sk-ant-api03-abcdefghijklmnopqrstuvwxyz_-9876\n")
            << QStringLiteral("x ") + masked("9876") + QStringLiteral("\n");
        QTest::newRow("aws") << QStringLiteral("AKIAIOSFODNN7EXAMPLE") << masked("MPLE");
        QTest::newRow("github") << QStringLiteral("token ghp_abcdefghijklmnopqrstuvwxyz0123456789!")
                                << QStringLiteral("token ") + masked("6789") + QStringLiteral("!");
        QTest::newRow("configured value") << QStringLiteral("printed: ") + kConfigured
                                          << QStringLiteral("printed: ") + masked("WXYZ");
        QTest::newRow("configured value inside a word")
            << QStringLiteral("xx") + kConfigured + QStringLiteral("yy")
            << QStringLiteral("xx") + masked("WXYZ") + QStringLiteral("yy");
        QTest::newRow("twice") << kConfigured + QStringLiteral(" and ") + kConfigured
                               << masked("WXYZ") + QStringLiteral(" and ") + masked("WXYZ");
        QTest::newRow("query string")
            << QStringLiteral("/v1/models?api_key=") + kConfigured + QStringLiteral("&x=1")
            << QStringLiteral("/v1/models?api_key=") + masked("WXYZ") + QStringLiteral("&x=1");
        QTest::newRow("client key") << QStringLiteral("client-key-7777-abcd said hi")
                                    << masked("abcd") + QStringLiteral(" said hi");
        QTest::newRow("ordinary words") << QStringLiteral("import sklearn; sk-learn AKIA ghp_x")
                                        << QStringLiteral("import sklearn; sk-learn AKIA ghp_x");
        QTest::newRow("short sk- word")
            << QStringLiteral("sk-short-one") << QStringLiteral("sk-short-one");
        QTest::newRow("already masked") << masked("WXYZ") << masked("WXYZ");
        // Where the policy's first look (before its expression) must not stop short.
        QTest::newRow("format after punctuation")
            << QStringLiteral("print('sk-proj-AbCdEfGhIjKlMnOpQrSt1234')")
            << QStringLiteral("print('") + masked("1234") + QStringLiteral("')");
        QTest::newRow("a key after words that begin like one")
            << QStringLiteral(
                   "sk-learn xsk-abcdefghijklmnopqrstuvwx AKIA1 "
                   "sk-proj-AbCdEfGhIjKlMnOpQrSt1234 ghx ghp_abcdefghijklmnopqrstuvwxyz0123456789")
            << QStringLiteral("sk-learn xsk-abcdefghijklmnopqrstuvwx AKIA1 ") + masked("1234") +
                   QStringLiteral(" ghx ") + masked("6789");
        QTest::newRow("format inside a word is not a key")
            << QStringLiteral("xghp_abcdefghijklmnopqrstuvwxyz0123456789")
            << QStringLiteral("xghp_abcdefghijklmnopqrstuvwxyz0123456789");
        QTest::newRow("value with dots")
            << QStringLiteral("x=") + kDotted + QStringLiteral(";")
            << QStringLiteral("x=") + masked("e.42") + QStringLiteral(";");
        QTest::newRow("value cut by a space is not the value")
            << QStringLiteral("cfg-0123456789 abcdefWXYZ")
            << QStringLiteral("cfg-0123456789 abcdefWXYZ");
        QTest::newRow("short strings around a value")
            << QStringLiteral("a b ") + kConfigured + QStringLiteral(" c")
            << QStringLiteral("a b ") + masked("WXYZ") + QStringLiteral(" c");
    }
    void maskText() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        CredentialPolicy policy;
        policy.setConfiguredSecrets({kConfigured, QStringLiteral("short"), kDotted});
        policy.addClientKey(QStringLiteral("client-key-7777-abcd"));
        QCOMPARE(policy.maskText(text), expected);
        QCOMPARE(policy.maskText(text.toUtf8()), expected.toUtf8());
    }

    // The recorder keeps an SSE event as decoded when its data as it came cannot need masking:
    // wherever maskValue would change the parsed value, mayNeedMasking must say so.
    void mayNeedMaskingNeverMissesASecret_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<bool>("needsIt"); // what maskValue does to the parsed value
        QTest::addColumn<bool>("mayNeed"); // what the first look must say
        QTest::newRow("a delta") << QByteArray("{\"type\":\"response.output_text.delta\","
                                               "\"delta\":\"hello, world - plain A_K text\"}")
                                 << false << false;
        QTest::newRow("a long run of one letter")
            << QByteArray("{\"delta\":\"" + QByteArray(5000, 'x') + "\"}") << false << false;
        QTest::newRow("not JSON") << QByteArray("just words") << false << false;
        QTest::newRow("key format")
            << QByteArray("{\"delta\":\"sk-proj-AbCdEfGhIjKlMnOpQrSt1234\"}") << true << true;
        QTest::newRow("aws") << QByteArray("{\"d\":\"AKIAIOSFODNN7EXAMPLE\"}") << true << true;
        QTest::newRow("github") << QByteArray(
                                       "{\"d\":\"x ghp_abcdefghijklmnopqrstuvwxyz0123456789\"}")
                                << true << true;
        QTest::newRow("escaped key format")
            << QByteArray("{\"delta\":\"\\u0073k-proj-AbCdEfGhIjKlMnOpQrSt1234\"}") << true << true;
        QTest::newRow("escaped but clean")
            << QByteArray("{\"delta\":\"a \\\"quote\\\"\"}") << false << true;
        QTest::newRow("configured value")
            << QByteArray("{\"delta\":\"printed " + kConfigured.toUtf8() + "\"}") << true << true;
        QTest::newRow("configured value in a word")
            << QByteArray("{\"delta\":\"xx" + kConfigured.toUtf8() + "yy\"}") << true << true;
        QTest::newRow("dotted value")
            << QByteArray("{\"d\":\"x=" + kDotted.toUtf8() + ";\"}") << true << true;
        QTest::newRow("client key") << QByteArray("[\"client-key-7777-abcd\"]") << true << true;
        for (const char *name : {"api_key", "APIKEY", "Authorization", "x-api-key", "master_key",
                                 "token", "access_token", "x-access-token", "openai_api_key",
                                 "myAccessToken", "user_api_key_hash", "control_token"})
            QTest::newRow(name) << QByteArray("{\"nested\":{\"" + QByteArray(name) +
                                              "\":\"not-a-known-value\"}}")
                                << true << true;
        QTest::newRow("non-ASCII around a value")
            << QByteArray("{\"d\":\"\xc3\xa9" + kConfigured.toUtf8() + "\xc3\xa9\"}") << true
            << true;
    }
    void mayNeedMaskingNeverMissesASecret() {
        QFETCH(QByteArray, json);
        QFETCH(bool, needsIt);
        QFETCH(bool, mayNeed);
        CredentialPolicy policy;
        policy.setConfiguredSecrets({kConfigured, QStringLiteral("short"), kDotted});
        policy.addClientKey(QStringLiteral("client-key-7777-abcd"));
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
        const QJsonValue parsed = error.error != QJsonParseError::NoError
                                      ? QJsonValue(QString::fromUtf8(json))
                                  : doc.isObject() ? QJsonValue(doc.object())
                                                   : QJsonValue(doc.array());
        QCOMPARE(policy.maskValue(parsed) != parsed, needsIt);
        QCOMPARE(policy.mayNeedMasking(json), mayNeed);
    }

    // Past a handful of values a long word goes straight to the expression: every one of many
    // client keys is still found, in text and in any string of an object.
    void manyClientKeysAreAllFound() {
        CredentialPolicy policy;
        for (int i = 0; i < 20; ++i)
            policy.addClientKey(QStringLiteral("client-key-%1-abcd").arg(i, 4, 10, QChar(u'0')));
        for (int i = 0; i < 20; ++i) {
            const QString key = QStringLiteral("client-key-%1-abcd").arg(i, 4, 10, QChar(u'0'));
            QCOMPARE(policy.maskText(QStringLiteral("the key ") + key + QStringLiteral(".")),
                     QStringLiteral("the key ") + masked("abcd") + QStringLiteral("."));
            const QJsonObject in{
                {QStringLiteral("input"), QJsonArray{QString(QStringLiteral("xx") + key)}}};
            QCOMPARE(
                policy.maskObject(in).value(QStringLiteral("input")).toArray().at(0).toString(),
                QStringLiteral("xx") + masked("abcd"));
        }
        QCOMPARE(policy.maskText(QStringLiteral("a long ordinary_identifier_of_words")),
                 QStringLiteral("a long ordinary_identifier_of_words"));
    }

    void secretKeyNames_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<bool>("secret");
        for (const char *k :
             {"api_key", "API_KEY", "ApiKey", "Authorization", "x-api-key", "master_key", "Token",
              "access_token", "X-Access-Token", "openai_api_key", "OPENAI_API_KEY",
              "githubAccessToken", "user_api_key_hash", "control_token"})
            QTest::newRow(k) << QString::fromLatin1(k) << true;
        for (const char *k : {"tokens", "api_keys", "max_tokens", "key", "model", "", "api_key_id",
                              "authorization_url"})
            QTest::newRow(k) << QString::fromLatin1(k) << false;
    }
    void secretKeyNames() {
        QFETCH(QString, key);
        QFETCH(bool, secret);
        QCOMPARE(CredentialPolicy::isSecretKey(key), secret);
    }

    void reloadReplacesConfiguredButKeepsClientKeys() {
        CredentialPolicy policy;
        policy.setConfiguredSecrets({kConfigured});
        policy.addClientKey(QStringLiteral("client-key-7777-abcd"));
        policy.setConfiguredSecrets({QStringLiteral("another-configured-1")});
        QCOMPARE(policy.maskText(kConfigured), kConfigured);
        QCOMPARE(policy.maskText(QStringLiteral("another-configured-1")), masked("ed-1"));
        QCOMPARE(policy.maskText(QStringLiteral("client-key-7777-abcd")), masked("abcd"));
    }

    void clientKeysAreBounded() {
        CredentialPolicy policy;
        for (int i = 0; i <= CredentialPolicy::kMaxClientKeys; ++i)
            policy.addClientKey(QStringLiteral("client-key-%1").arg(i, 4, 10, QChar(u'0')));
        QCOMPARE(policy.knownSecrets().size(), CredentialPolicy::kMaxClientKeys);
        QCOMPARE(policy.maskText(QStringLiteral("client-key-0000")),
                 QStringLiteral("client-key-0000"));
    }

    // Registrations on one thread while others mask: each masking reads a whole snapshot.
    void registrationIsThreadSafe() {
        CredentialPolicy policy;
        policy.setConfiguredSecrets({kConfigured});
        std::atomic<bool> stop{false};
        std::atomic<int> wrong{0};
        QThread *reader = QThread::create([&] {
            while (!stop.load())
                if (policy.maskText(kConfigured) != masked("WXYZ"))
                    ++wrong;
        });
        reader->start();
        for (int i = 0; i < 500; ++i)
            policy.addClientKey(QStringLiteral("client-key-%1-xxxx").arg(i));
        stop = true;
        reader->wait();
        delete reader;
        QCOMPARE(wrong.load(), 0);
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
        const QJsonObject out = CredentialPolicy::formatsOnly().maskObject(in);
        const QByteArray text = QJsonDocument(out).toJson(QJsonDocument::Compact);
        QVERIFY(!text.contains("sk-secret-value"));
        QVERIFY(!text.contains("Bearer-xyz"));
        QVERIFY(!text.contains("k-7777"));
        QVERIFY(text.contains("9999"));
        QCOMPARE(out.value(QStringLiteral("model")).toString(), QStringLiteral("gpt-5"));
    }

    // Values are masked in any string, not only under secret-named keys.
    void masksValuesInAnyString() {
        CredentialPolicy policy;
        policy.setConfiguredSecrets({kConfigured});
        const QJsonObject in{
            {QStringLiteral("input"),
             QJsonArray{
                 QString(QStringLiteral("my key is ") + kConfigured),
                 QJsonObject{{QStringLiteral("code"),
                              QStringLiteral("print('sk-proj-AbCdEfGhIjKlMnOpQrSt1234')")}}}},
            {QStringLiteral("error"),
             QJsonObject{{QStringLiteral("message"),
                          QString(QStringLiteral("Incorrect API key provided: ") + kConfigured)}}}};
        const QByteArray text = QJsonDocument(policy.maskObject(in)).toJson(QJsonDocument::Compact);
        QVERIFY2(!text.contains(kConfigured.toUtf8()), text.constData());
        QVERIFY(!text.contains("AbCdEfGhIjKlMnOpQrSt"));
        QVERIFY(text.contains(masked("WXYZ").toUtf8()));
        QVERIFY(text.contains(masked("1234").toUtf8()));
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
                .replace("@", QString(kEllipsis).toUtf8())
                .constData());
        QCOMPARE(CredentialPolicy::formatsOnly().maskObject(in), expected);
        QCOMPARE(QJsonDocument(in).toJson(), before);
        const QJsonObject clean = parse(R"({"a":[{"b":[{"c":"d"}]}],"e":{"f":1}})");
        QCOMPARE(CredentialPolicy::formatsOnly().maskObject(clean), clean);
    }

    // Masking what is masked changes nothing (publish, then store, then export).
    void maskingIsIdempotent() {
        CredentialPolicy policy;
        policy.setConfiguredSecrets({kConfigured});
        const QJsonObject headers = policy.maskHeaders(
            {{"Authorization", "Bearer sk-test-00001111"}, {"X-Custom", kConfigured.toUtf8()}});
        QCOMPARE(headers.value(QStringLiteral("authorization")).toString(),
                 QStringLiteral("Bearer ") + masked("1111"));
        QCOMPARE(headers.value(QStringLiteral("x-custom")).toString(), masked("WXYZ"));
        QCOMPARE(policy.maskObject(headers), headers);
    }

    void secretHeaderNames_data() {
        QTest::addColumn<QByteArray>("name");
        QTest::addColumn<bool>("secret");
        for (const char *n : {"authorization", "proxy-authorization", "api-key", "x-api-key",
                              "cookie", "set-cookie", "x-goog-api-key", "x-access-token"})
            QTest::newRow(n) << QByteArray(n) << true;
        for (const char *n : {"content-type", "x-request-id", "openai-organization"})
            QTest::newRow(n) << QByteArray(n) << false;
    }
    void secretHeaderNames() {
        QFETCH(QByteArray, name);
        QFETCH(bool, secret);
        QCOMPARE(CredentialPolicy::isSecretHeader(name), secret);
    }

    // A secret split across two live output chunks: no published chunk holds any piece of it,
    // and the published chunks put together read as the masked whole.
    void splitAcrossLiveChunks_data() {
        QTest::addColumn<QString>("secret");
        QTest::addColumn<int>("cut");
        QTest::newRow("configured, mid") << kConfigured << 10;
        QTest::newRow("configured, after one char") << kConfigured << 1;
        QTest::newRow("configured, before the last") << kConfigured << int(kConfigured.size() - 1);
        QTest::newRow("format") << QStringLiteral("sk-proj-AbCdEfGhIjKlMnOpQrSt1234") << 12;
        QTest::newRow("configured with dots") << QStringLiteral("dotted.secret.value.42") << 8;
    }
    void splitAcrossLiveChunks() {
        QFETCH(QString, secret);
        QFETCH(int, cut);
        EventBus bus;
        bus.credentials()->setConfiguredSecrets(
            {kConfigured, QStringLiteral("dotted.secret.value.42")});
        QSignalSpy spy(&bus, &EventBus::eventPublished);
        const auto chunk = [&](const QString &text) {
            bus.publish(InspectorEvent::Kind::CodeRunOutput, QStringLiteral("req_1"), 0,
                        {{QStringLiteral("callId"), QStringLiteral("call_1")},
                         {QStringLiteral("stream"), QStringLiteral("stdout")},
                         {QStringLiteral("text"), text}});
        };
        chunk(QStringLiteral("before\nkey: ") + secret.left(cut));
        chunk(secret.mid(cut) + QStringLiteral("\nafter"));
        bus.publish(InspectorEvent::Kind::CodeExecuted, QStringLiteral("req_1"), 0,
                    {{QStringLiteral("callId"), QStringLiteral("call_1")},
                     {QStringLiteral("stdout"), QString(QStringLiteral("before\nkey: ") + secret +
                                                        QStringLiteral("\nafter"))}});
        QString joined;
        int outputs = 0;
        for (const QList<QVariant> &args : std::as_const(spy)) {
            const auto e = args.at(0).value<InspectorEvent>();
            const QString text = e.data.value(QStringLiteral("text")).toString();
            if (e.kind == InspectorEvent::Kind::CodeRunOutput) {
                ++outputs;
                QVERIFY2(!text.contains(secret.left(cut)) || cut < 4, qPrintable(text));
                if (secret.size() - cut > 4) // the last four are the mask's
                    QVERIFY2(!text.contains(secret.mid(cut).chopped(4)), qPrintable(text));
                joined += text;
            } else {
                QCOMPARE(e.kind, InspectorEvent::Kind::CodeExecuted);
                QVERIFY(!e.data.value(QStringLiteral("stdout")).toString().contains(secret));
            }
        }
        QVERIFY(outputs >= 2); // "before" was not held back with the secret
        QCOMPARE(joined, QStringLiteral("before\nkey: ") + CredentialPolicy::mask(secret) +
                             QStringLiteral("\nafter"));
        QCOMPARE(spy.last().at(0).value<InspectorEvent>().kind, InspectorEvent::Kind::CodeExecuted);
    }

    // Other streams and runs are not held up by one stream's unfinished word.
    void holdbackIsPerStream() {
        EventBus bus;
        QSignalSpy spy(&bus, &EventBus::eventPublished);
        const auto chunk = [&](const QString &call, const QString &stream, const QString &text) {
            bus.publish(InspectorEvent::Kind::CodeRunOutput, QStringLiteral("req_1"), 0,
                        {{QStringLiteral("callId"), call},
                         {QStringLiteral("stream"), stream},
                         {QStringLiteral("text"), text}});
        };
        chunk(QStringLiteral("call_1"), QStringLiteral("stdout"), QStringLiteral("partial"));
        chunk(QStringLiteral("call_1"), QStringLiteral("stderr"), QStringLiteral("line\n"));
        chunk(QStringLiteral("call_2"), QStringLiteral("stdout"), QStringLiteral("done\n"));
        QCOMPARE(spy.count(), 2);
        bus.publish(InspectorEvent::Kind::RequestFinished, QStringLiteral("req_1"), 0, {});
        QCOMPARE(spy.count(), 4);
        QCOMPARE(spy.at(2).at(0).value<InspectorEvent>().data.value(QStringLiteral("text")),
                 QStringLiteral("partial"));
    }

    // Every event's data leaves the bus masked, whatever its kind.
    void publishMasksEveryEvent() {
        EventBus bus;
        bus.credentials()->setConfiguredSecrets({kConfigured});
        QSignalSpy spy(&bus, &EventBus::eventPublished);
        bus.publish(InspectorEvent::Kind::RequestFailed, QStringLiteral("req_1"), 0,
                    {{QStringLiteral("message"),
                      QString(QStringLiteral("upstream said: bad key ") + kConfigured)}});
        bus.publish(InspectorEvent::Kind::ClientRequest, QStringLiteral("req_2"), -1,
                    {{QStringLiteral("query"), QString(QStringLiteral("key=") + kConfigured)}});
        QCOMPARE(spy.count(), 2);
        for (const QList<QVariant> &args : std::as_const(spy)) {
            const QByteArray json = QJsonDocument(args.at(0).value<InspectorEvent>().data).toJson();
            QVERIFY2(!json.contains(kConfigured.toUtf8()), json.constData());
            QVERIFY(json.contains(masked("WXYZ").toUtf8()));
        }
    }

    // Data masked once goes into several events as it was masked; a secret registered in
    // between (a new client's key) is masked in the later events all the same.
    void dataMaskedOnceIsMaskedAgainWhenTheSecretsChange() {
        EventBus bus;
        bus.credentials()->setConfiguredSecrets({kConfigured});
        const QString newKey = QStringLiteral("client-key-new-0001");
        const QJsonObject body{
            {QStringLiteral("input"), QString(kConfigured + QStringLiteral(" ") + newKey)}};
        const EventBus::Masked once = bus.maskOnce({{QStringLiteral("request"), body}});
        QSignalSpy spy(&bus, &EventBus::eventPublished);
        bus.publish(InspectorEvent::Kind::UpstreamCallStarted, QStringLiteral("r"), 0,
                    {{QStringLiteral("url"), QStringLiteral("http://x")}}, once);
        bus.credentials()->addClientKey(newKey);
        bus.publish(InspectorEvent::Kind::UpstreamCall, QStringLiteral("r"), 0,
                    {{QStringLiteral("status"), 200}}, once);
        QCOMPARE(spy.count(), 2);
        const auto inputOf = [&](int i) {
            return spy.at(i)
                .at(0)
                .value<InspectorEvent>()
                .data.value(QStringLiteral("request"))
                .toObject()
                .value(QStringLiteral("input"))
                .toString();
        };
        QCOMPARE(inputOf(0), masked("WXYZ") + QStringLiteral(" ") + newKey);
        QCOMPARE(inputOf(1), masked("WXYZ") + QStringLiteral(" ") + masked("0001"));
        QCOMPARE(spy.at(0).at(0).value<InspectorEvent>().data.value(QStringLiteral("url")),
                 QJsonValue(QStringLiteral("http://x")));
        QCOMPARE(spy.at(1).at(0).value<InspectorEvent>().data.value(QStringLiteral("status")),
                 QJsonValue(200));
    }
};

QTEST_GUILESS_MAIN(TestCredentialPolicy)
#include "tst_credentialpolicy.moc"
