#include "inspect/textformat.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

using namespace loopscope;
using namespace Qt::StringLiterals;

class TestTextFormat : public QObject {
    Q_OBJECT

private slots:
    void formatDuration_data() {
        QTest::addColumn<double>("ms");
        QTest::addColumn<QString>("text");
        QTest::newRow("unknown") << -1.0 << QStringLiteral("…");
        QTest::newRow("sub-ms") << 0.42 << QStringLiteral("0.4 ms");
        QTest::newRow("few ms") << 7.25 << QStringLiteral("7.3 ms");
        QTest::newRow("ms") << 12.0 << QStringLiteral("12 ms");
        QTest::newRow("just under 1 s") << 999.0 << QStringLiteral("999 ms");
        QTest::newRow("rounds up to 1 s") << 999.7 << QStringLiteral("1 s");
        QTest::newRow("whole seconds") << 5000.0 << QStringLiteral("5 s");
        QTest::newRow("half second") << 1500.0 << QStringLiteral("1.5 s");
        QTest::newRow("whole tens") << 30000.0 << QStringLiteral("30 s");
        QTest::newRow("seconds") << 1234.0 << QStringLiteral("1.23 s");
        QTest::newRow("tens of seconds") << 12345.0 << QStringLiteral("12.3 s");
        QTest::newRow("minutes") << 245000.0 << QStringLiteral("4 min 05 s");
        QTest::newRow("hours") << 3720000.0 << QStringLiteral("1 h 02 min");
    }
    void formatDuration() {
        QFETCH(double, ms);
        QFETCH(QString, text);
        QCOMPARE(textformat::formatDuration(ms), text);
    }

    void plural_data() {
        QTest::addColumn<int>("n");
        QTest::addColumn<QString>("word");
        QTest::addColumn<QString>("many");
        QTest::addColumn<QString>("text");
        QTest::newRow("one") << 1 << u"request"_s << QString() << u"1 request"_s;
        QTest::newRow("two") << 2 << u"request"_s << QString() << u"2 requests"_s;
        QTest::newRow("zero") << 0 << u"request"_s << QString() << u"0 requests"_s;
        QTest::newRow("irregular one") << 1 << u"sandbox"_s << u"sandboxes"_s << u"1 sandbox"_s;
        QTest::newRow("irregular many") << 3 << u"sandbox"_s << u"sandboxes"_s << u"3 sandboxes"_s;
    }
    void plural() {
        QFETCH(int, n);
        QFETCH(QString, word);
        QFETCH(QString, many);
        QFETCH(QString, text);
        QCOMPARE(textformat::plural(n, word, many), text);
    }

    void prettyJson_data() {
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("text");
        QTest::newRow("object") << QJsonValue(QJsonObject{{QStringLiteral("a"), 1}})
                                << QStringLiteral("{\n    \"a\": 1\n}");
        QTest::newRow("array") << QJsonValue(QJsonArray{1, 2})
                               << QStringLiteral("[\n    1,\n    2\n]");
        QTest::newRow("string, no quotes")
            << QJsonValue(QStringLiteral("print(1)")) << QStringLiteral("print(1)");
        QTest::newRow("integer") << QJsonValue(42) << QStringLiteral("42");
        QTest::newRow("fraction") << QJsonValue(0.25) << QStringLiteral("0.25");
        QTest::newRow("boolean") << QJsonValue(true) << QStringLiteral("true");
        QTest::newRow("null") << QJsonValue(QJsonValue::Null) << QString();
    }
    void prettyJson() {
        QFETCH(QJsonValue, value);
        QFETCH(QString, text);
        QCOMPARE(textformat::prettyJson(value), text);
    }

    void maskedIdentity_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("text");
        QTest::newRow("key: last 4 like the log") << u"sk-test-abcdef1234"_s << u"…1234"_s;
        QTest::newRow("already masked") << u"…wxyz"_s << u"…wxyz"_s;
        QTest::newRow("anonymous") << u"anonymous"_s << u"no key"_s;
        QTest::newRow("anonymous masked") << u"…mous"_s << u"no key"_s;
        QTest::newRow("empty") << QString() << u"no key"_s;
        QTest::newRow("short key") << u"abc"_s << u"…"_s;
    }
    void maskedIdentity() {
        QFETCH(QString, input);
        QFETCH(QString, text);
        QCOMPARE(textformat::maskedIdentity(input), text);
    }
};

QTEST_GUILESS_MAIN(TestTextFormat)
#include "tst_textformat.moc"
