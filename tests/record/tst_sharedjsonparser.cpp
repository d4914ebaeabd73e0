// SharedJsonParser (core/record): JSON the store wrote, parsed with its large repeated parts
// shared. Every sample must come out exactly as Qt's own parser reads it — the first time
// (parts parsed) and again (parts reused) — and the structural reads must find the same
// members and elements.
#include "record/sharedjsonparser.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace loopscope;

namespace {

QByteArray big(const QByteArray &unit, int times) {
    QByteArray out;
    for (int i = 0; i < times; ++i)
        out += unit;
    return out;
}

// A request as an agent sends it: a long prompt with escapes, tools, a history.
QByteArray request(int turns) {
    QJsonArray messages;
    for (int i = 0; i < turns; ++i)
        messages << QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                {QStringLiteral("content"),
                                 QString(QStringLiteral("step %1: ").arg(i) + QString(80, u'x'))}};
    QJsonArray tools;
    for (int i = 0; i < 6; ++i)
        tools << QJsonObject{
            {QStringLiteral("name"), QStringLiteral("Tool%1").arg(i)},
            {QStringLiteral("description"), QString::fromLatin1(big("use \"it\" \\ well\n", 20))}};
    return QJsonDocument(QJsonObject{{QStringLiteral("model"), QStringLiteral("m")},
                                     {QStringLiteral("system"),
                                      QString::fromUtf8(
                                          big("rule: quote \" back\\slash \\\\ tab\t é ✓\n", 60))},
                                     {QStringLiteral("tools"), tools},
                                     {QStringLiteral("messages"), messages}})
        .toJson(QJsonDocument::Compact);
}

QJsonValue qtValue(const QByteArray &json) {
    const QJsonDocument doc = QJsonDocument::fromJson("[" + json + "]");
    return doc.isArray() && doc.array().size() == 1 ? doc.array().at(0) : QJsonValue::Undefined;
}

} // namespace

class TstSharedJsonParser : public QObject {
    Q_OBJECT
private slots:
    void parsesAsQtDoes_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::newRow("small object") << QByteArray("{\"a\":1,\"b\":[true,null,\"x\"]}");
        QTest::newRow("scalar string") << QByteArray("\"a \\\"quoted\\\" \\\\ word\"");
        QTest::newRow("number") << QByteArray("-12.5e3");
        QTest::newRow("empty containers") << QByteArray("{\"a\":{},\"b\":[],\"c\":\"\"}");
        QTest::newRow("backslashes before a quote")
            << QByteArray("{\"k\":\"ends with \\\\\",\"l\":\"\\\\\\\"q\\\\\\\\\",\"m\":2}");
        QTest::newRow("escaped key") << QByteArray("{\"a\\\"b\":1,\"\\u00e9\":2}");
        QTest::newRow("request, 3 turns") << request(3);
        QTest::newRow("request, 40 turns") << request(40);
        QTest::newRow("large array of small strings")
            << QJsonDocument(QJsonArray::fromStringList(
                                 QString::fromLatin1(big("word\\n ", 400)).split(u' ')))
                   .toJson(QJsonDocument::Compact);
        QTest::newRow("indented") << QJsonDocument::fromJson(request(5)).toJson();
        QTest::newRow("whitespace around")
            << QByteArray(" \n{ \"a\" : [ 1 , 2 ] , \"b\" : \"" + big("x", 2000) + "\" }\n ");
    }
    void parsesAsQtDoes() {
        QFETCH(QByteArray, json);
        const QJsonValue expected = qtValue(json);
        QVERIFY(!expected.isUndefined());
        SharedJsonParser parser;
        QCOMPARE(parser.parse(json), expected);
        parser.nextGeneration();
        QCOMPARE(parser.parse(json), expected); // now from what it kept
        QCOMPARE(SharedJsonParser::parseOnce(json), expected);
    }

    void repeatedPartsAreReused() {
        SharedJsonParser parser;
        const QJsonValue first = parser.parse(request(10));
        QVERIFY(parser.cachedValues() > 0);
        QCOMPARE(parser.reused(), 0);
        parser.nextGeneration();
        const QJsonValue second = parser.parse(request(11));
        // The prompt, the tool list's tools and the 10 earlier messages were not parsed again.
        QVERIFY2(parser.reused() >= 1 + 6 + 10, qPrintable(QString::number(parser.reused())));
        QCOMPARE(second, qtValue(request(11)));
        QCOMPARE(first, qtValue(request(10)));
        // What no flow used for kKeepGenerations is forgotten.
        for (int i = 0; i <= SharedJsonParser::kKeepGenerations; ++i)
            parser.nextGeneration();
        QCOMPARE(parser.cachedValues(), 0);
    }

    void malformedIsUndefined_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("unterminated string") << QByteArray("{\"a\":\"b");
        QTest::newRow("large, truncated") << request(20).chopped(7);
        QTest::newRow("missing colon") << QByteArray("{\"a\" 1}");
    }
    void malformedIsUndefined() {
        QFETCH(QByteArray, json);
        SharedJsonParser parser;
        QVERIFY(parser.parse(json).isUndefined());
    }

    void membersAndElements() {
        const QByteArray json =
            "{\"kind\":\"client_request\",\"body\":{\"x\":[1,\"]}\"]},\"n\":-1.5}";
        const QList<SharedJsonParser::Member> members = SharedJsonParser::members(json);
        QCOMPARE(members.size(), 3);
        QCOMPARE(members.at(0).key, "kind");
        QCOMPARE(members.at(0).value, "\"client_request\"");
        QCOMPARE(members.at(1).value, "{\"x\":[1,\"]}\"]}");
        QCOMPARE(members.at(2).value, "-1.5");
        const QList<QByteArrayView> elements =
            SharedJsonParser::elements("[{\"a\":\"[\\\"]\"}, 2 ,\"s\"]");
        QCOMPARE(elements.size(), 3);
        QCOMPARE(elements.at(0), "{\"a\":\"[\\\"]\"}");
        QCOMPARE(elements.at(1), "2");
        const QList<QList<SharedJsonParser::Member>> objects = SharedJsonParser::objects(
            "[{\"kind\":\"a\",\"body\":{\"b\":\"}\"}},{},{\"kind\":\"c\"}]");
        QCOMPARE(objects.size(), 3);
        QCOMPARE(objects.at(0).size(), 2);
        QCOMPARE(objects.at(0).at(1).value, "{\"b\":\"}\"}");
        QVERIFY(objects.at(1).isEmpty());
        QCOMPARE(objects.at(2).at(0).value, "\"c\"");
        QVERIFY(SharedJsonParser::objects("[{\"a\":1},2]").isEmpty());
        QVERIFY(SharedJsonParser::members("[1]").isEmpty());
        QVERIFY(SharedJsonParser::elements("{\"a\":1}").isEmpty());
        QCOMPARE(SharedJsonParser::keyText("a\\\"b"), QStringLiteral("a\"b"));
    }
};

QTEST_GUILESS_MAIN(TstSharedJsonParser)
#include "tst_sharedjsonparser.moc"
