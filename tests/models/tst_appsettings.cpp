#include "models/appsettings.h"

#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using namespace loopscope;

class TestAppSettings : public QObject {
    Q_OBJECT

private slots:
    void roundTripThroughQSettings() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString file = dir.filePath(QStringLiteral("loopscope.ini"));
        {
            QSettings empty(file, QSettings::IniFormat);
            QCOMPARE(AppSettings::load(empty), AppSettings{});
        }
        AppSettings s;
        s.port = 4100;
        s.upstream = QStringLiteral("http://127.0.0.1:8080/v1");
        s.upstreamTimeoutSeconds = 120;
        s.executionTimeoutSeconds = 5;
        s.maxLoops = 4;
        s.sandboxPoolSize = 3;
        s.retention = 20000;
        {
            QSettings out(file, QSettings::IniFormat);
            s.save(out);
        }
        QSettings in(file, QSettings::IniFormat);
        QCOMPARE(AppSettings::load(in), s);
    }

    void normalized_data() {
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("upstream");
        QTest::addColumn<int>("retention");
        QTest::addColumn<int>("expectedPort");
        QTest::addColumn<QString>("expectedUpstream");
        QTest::addColumn<int>("expectedRetention");
        QTest::newRow("valid") << 4000 << QStringLiteral("demo") << 5000 << 4000
                               << QStringLiteral("demo") << 5000;
        QTest::newRow("free port")
            << 0 << QStringLiteral("demo") << 5000 << 0 << QStringLiteral("demo") << 5000;
        QTest::newRow("port too big")
            << 70000 << QStringLiteral("demo") << 5000 << 65535 << QStringLiteral("demo") << 5000;
        QTest::newRow("blank upstream")
            << 1 << QStringLiteral("  ") << 5000 << 1 << QStringLiteral("demo") << 5000;
        QTest::newRow("trimmed upstream") << 1 << QStringLiteral(" http://x/v1 ") << 5000 << 1
                                          << QStringLiteral("http://x/v1") << 5000;
        QTest::newRow("retention floor")
            << 1 << QStringLiteral("demo") << 3 << 1 << QStringLiteral("demo") << 100;
        QTest::newRow("retention ceiling")
            << 1 << QStringLiteral("demo") << 10'000'000 << 1 << QStringLiteral("demo") << 100000;
    }

    void normalized() {
        QFETCH(int, port);
        QFETCH(QString, upstream);
        QFETCH(int, retention);
        AppSettings s;
        s.port = port;
        s.upstream = upstream;
        s.retention = retention;
        const AppSettings n = s.normalized();
        QTEST(n.port, "expectedPort");
        QTEST(n.upstream, "expectedUpstream");
        QTEST(n.retention, "expectedRetention");
    }
};

QTEST_GUILESS_MAIN(TestAppSettings)
#include "tst_appsettings.moc"
