// AccessPolicy's decisions in isolation (origins, content types, the token compare) and the
// control token file (0600, replaced each start). The same rules over real sockets are in
// tst_controlaccess.
#include "control/controltoken.h"
#include "proxy/accesspolicy.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

using namespace loopscope;

class TstAccessPolicy : public QObject {
    Q_OBJECT
private slots:
    void origins_data() {
        QTest::addColumn<QByteArray>("origin");
        QTest::addColumn<bool>("allowed");
        QTest::newRow("no origin (SDK, curl)") << QByteArray() << true;
        QTest::newRow("localhost") << QByteArray("http://localhost:5173") << true;
        QTest::newRow("localhost https no port") << QByteArray("https://localhost") << true;
        QTest::newRow("127.0.0.1") << QByteArray("http://127.0.0.1:3000") << true;
        QTest::newRow("[::1]") << QByteArray("http://[::1]:8080") << true;
        QTest::newRow("upper case") << QByteArray("HTTP://LOCALHOST:1") << true;
        QTest::newRow("listed") << QByteArray("https://app.example:8443") << true;
        QTest::newRow("listed, trailing slash") << QByteArray("https://app.example:8443/") << true;
        QTest::newRow("listed host, other port") << QByteArray("https://app.example:9443") << false;
        QTest::newRow("listed host, other scheme")
            << QByteArray("http://app.example:8443") << false;
        QTest::newRow("foreign") << QByteArray("https://evil.example") << false;
        QTest::newRow("localhost as a subdomain")
            << QByteArray("http://localhost.evil.example") << false;
        QTest::newRow("127.0.0.1 as a subdomain") << QByteArray("http://127.0.0.1.nip.io") << false;
        QTest::newRow("userinfo trick") << QByteArray("http://localhost@evil.example") << false;
        QTest::newRow("null (sandboxed frame, file:)") << QByteArray("null") << false;
        QTest::newRow("file scheme") << QByteArray("file://localhost") << false;
        QTest::newRow("garbage") << QByteArray("not an origin") << false;
    }
    void origins() {
        QFETCH(QByteArray, origin);
        QFETCH(bool, allowed);
        AccessPolicy policy;
        policy.setAllowedOrigins({QStringLiteral("https://app.example:8443")});
        QCOMPARE(policy.originAllowed(origin), allowed);
    }

    void normalizesOrigins() {
        QCOMPARE(AccessPolicy::normalizeOrigin("https://App.Example:443/"),
                 QByteArray("https://app.example"));
        QCOMPARE(AccessPolicy::normalizeOrigin("http://[::1]:80"), QByteArray("http://[::1]"));
        QCOMPARE(AccessPolicy::normalizeOrigin("http://x.example/path"), QByteArray());
    }

    void jsonContentTypes_data() {
        QTest::addColumn<QByteArray>("type");
        QTest::addColumn<bool>("json");
        QTest::newRow("json") << QByteArray("application/json") << true;
        QTest::newRow("json charset") << QByteArray("application/json; charset=utf-8") << true;
        QTest::newRow("upper") << QByteArray("Application/JSON") << true;
        QTest::newRow("+json") << QByteArray("application/merge-patch+json") << true;
        QTest::newRow("text/plain") << QByteArray("text/plain") << false;
        QTest::newRow("form") << QByteArray("application/x-www-form-urlencoded") << false;
        QTest::newRow("multipart") << QByteArray("multipart/form-data; boundary=x") << false;
        QTest::newRow("missing") << QByteArray() << false;
    }
    void jsonContentTypes() {
        QFETCH(QByteArray, type);
        QFETCH(bool, json);
        QCOMPARE(AccessPolicy::isJsonContentType(type), json);
    }

    void modelRoutes() {
        QVERIFY(AccessPolicy::isModelRoute(QStringLiteral("/v1/responses")));
        QVERIFY(AccessPolicy::isModelRoute(QStringLiteral("/chat/completions")));
        QVERIFY(AccessPolicy::isModelRoute(QStringLiteral("/v1/embeddings")));
        QVERIFY(!AccessPolicy::isModelRoute(QStringLiteral("/v1/files")));
        QVERIFY(!AccessPolicy::isModelRoute(QStringLiteral("/v1/audio/transcriptions")));
    }

    void constantTimeCompare() {
        QVERIFY(AccessPolicy::constantTimeEquals("secret-token", "secret-token"));
        QVERIFY(!AccessPolicy::constantTimeEquals("secret-token", "secret-tokem"));
        QVERIFY(!AccessPolicy::constantTimeEquals("secret-token", "secret"));
        QVERIFY(!AccessPolicy::constantTimeEquals("", "secret"));
        QVERIFY(!AccessPolicy::constantTimeEquals("secret", ""));
    }

    void tokenPrecedence() {
        QTemporaryDir dir;
        QProcessEnvironment env;
        env.insert(QStringLiteral("LOOPSCOPE_CONTROL_TOKEN"), QStringLiteral("from-env"));
        auto t = ControlToken::resolve(QStringLiteral("from-cli"), QStringLiteral("from-config"),
                                       env, dir.path());
        QCOMPARE(t.token, QByteArray("from-cli"));
        t = ControlToken::resolve({}, QStringLiteral("from-config"), env, dir.path());
        QCOMPARE(t.token, QByteArray("from-env"));
        QCOMPARE(t.source, ControlToken::Source::Environment);
        t = ControlToken::resolve({}, QStringLiteral("from-config"), QProcessEnvironment(),
                                  dir.path());
        QCOMPARE(t.token, QByteArray("from-config"));
        QVERIFY(t.filePath.isEmpty());
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("control-token"))));
    }

    void generatedTokenFileIsPrivateAndReplaced() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("control-token"));
        // A stale, world-readable file from before must not keep its mode or its token.
        {
            QFile stale(path);
            QVERIFY(stale.open(QIODevice::WriteOnly));
            stale.write("old-token\n");
        }
        QVERIFY(::chmod(QFile::encodeName(path).constData(), 0644) == 0);
        const auto first = ControlToken::resolve({}, {}, QProcessEnvironment(), dir.path());
        QCOMPARE(first.source, ControlToken::Source::Generated);
        QCOMPARE(first.token.size(), 64); // 32 random bytes, hex
        QCOMPARE(first.filePath, path);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll().trimmed(), first.token);
        struct stat st {};
        QVERIFY(::stat(QFile::encodeName(path).constData(), &st) == 0);
        QCOMPARE(int(st.st_mode & 0777), 0600);
        const auto second = ControlToken::resolve({}, {}, QProcessEnvironment(), dir.path());
        QVERIFY(second.token != first.token);
        QFile again(path);
        QVERIFY(again.open(QIODevice::ReadOnly));
        QCOMPARE(again.readAll().trimmed(), second.token);
    }
};

QTEST_GUILESS_MAIN(TstAccessPolicy)
#include "tst_accesspolicy.moc"
