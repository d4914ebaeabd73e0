// RequestBodyScan, the check that lets pass-through skip parsing a body: whatever it accepts,
// QJsonDocument must read as an object with the same top-level members (else the proxy would
// forward a body it used to refuse, or route on a different "model"); what it refuses or is
// unsure of is only a slower path. Checked case by case and on many mutated bodies.
#include "proxy/requestbodyscan.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QtTest>

using namespace loopscope;

namespace {

// The scan's verdict must never be "accepted" where QJsonDocument refuses, and its members
// must be the parsed object's.
void checkAgainstQt(const QByteArray &body) {
    const std::optional<RequestBodyScan> scan = RequestBodyScan::scan(body);
    if (!scan)
        return;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &error);
    QVERIFY2(error.error == QJsonParseError::NoError && doc.isObject(), body.left(200).constData());
    const QJsonObject object = doc.object();
    QCOMPARE(scan->members().size(), object.size());
    for (const RequestBodyScan::Member &m : scan->members()) {
        const QString key = QString::fromUtf8(m.key);
        QVERIFY2(object.contains(key), qPrintable(key));
        const QByteArray wrapped = "[" + m.value.toByteArray() + "]";
        QCOMPARE(QJsonDocument::fromJson(wrapped).array().at(0), object.value(key));
    }
}

} // namespace

// Declared first, defined below: moc does not follow the raw string literals the cases use.
class TstRequestBodyScan : public QObject {
    Q_OBJECT
private slots:
    void verdict_data();
    void verdict();
    void membersAndValues();
    // Every byte of a few valid bodies replaced, deleted or doubled in turn, plus random
    // mutations: whatever the scan accepts, QJsonDocument reads the same way.
    void mutatedBodiesAgreeWithQt();
};

void TstRequestBodyScan::verdict_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("accepted");
    const auto row = [](const char *name, const QByteArray &body, bool accepted) {
        QTest::newRow(name) << body << accepted;
    };
    row("chat", R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})", true);
    row("spaces", " \r\n\t{ \"model\" : \"m\" , \"n\" : [ 1 , -2.5e3 , true , null ] }\n", true);
    row("empty object", "{}", true);
    row("unicode",
        QByteArray("{\"model\":\"m\",\"t\":\"h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80\"}"), true);
    row("escapes", R"({"model":"m","t":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"})", true);
    row("numbers", R"({"a":0,"b":-0,"c":1.5,"d":1e10,"e":1E-5,"f":12345678901234567890})", true);
    row("nested", R"({"a":{"b":[{"c":[[]]},{}]}})", true);
    // Not JSON, or not an object: refused (the full parse then gives its exact error).
    row("empty", "", false);
    row("array", "[1]", false);
    row("string", "\"x\"", false);
    row("trailing garbage", "{} x", false);
    row("two objects", "{}{}", false);
    row("trailing comma", R"({"a":1,})", false);
    row("missing colon", R"({"a" 1})", false);
    row("single quotes", "{'a':1}", false);
    row("unquoted key", "{a:1}", false);
    row("unterminated", R"({"a":"b)", false);
    row("leading plus", R"({"a":+1})", false);
    row("leading zero", R"({"a":01})", false);
    row("bare dot", R"({"a":1.})", false);
    row("bad literal", R"({"a":tru})", false);
    row("bad escape", R"({"a":"\x"})", false);
    row("short unicode escape", R"({"a":"\u12"})", false);
    row("raw control", QByteArray("{\"a\":\"x\x01y\"}"), false);
    row("raw newline", QByteArray("{\"a\":\"x\ny\"}"), false);
    row("invalid utf8", QByteArray("{\"a\":\"\xff\"}"), false);
    row("overlong utf8", QByteArray("{\"a\":\"\xc0\xaf\"}"), false);
    row("utf8 surrogate", QByteArray("{\"a\":\"\xed\xa0\x80\"}"), false);
    row("truncated utf8", QByteArray("{\"a\":\"\xe2\x9c\"}"), false);
    // Valid JSON the scan leaves to the full parse, to be sure of the same reading.
    row("nul escape", R"({"a":"\u0000"})", false);
    row("lone high surrogate", R"({"a":"\ud83d"})", false);
    row("lone low surrogate", R"({"a":"\ude00"})", false);
    row("escaped key", R"({"mod\u0065l":"m"})", false);
    row("repeated key", R"({"model":"a","model":"b"})", false);
    row("huge exponent", R"({"a":1e400})", false);
    row("noncharacter", QByteArray("{\"a\":\"\xef\xbf\xbe\"}"), false);
    row("deep", QByteArray("{\"a\":") + QByteArray(600, '[') + QByteArray(600, ']') + "}", false);
}
void TstRequestBodyScan::verdict() {
    QFETCH(QByteArray, body);
    QFETCH(bool, accepted);
    QCOMPARE(RequestBodyScan::scan(body).has_value(), accepted);
    checkAgainstQt(body);
}

void TstRequestBodyScan::membersAndValues() {
    const QByteArray body =
        R"({"model":"gpt-4o", "stream":true,"tools":[{"type":"code_interpreter"}],)"
        R"("messages":[{"role":"user","content":"x"}],"esc":"a\nb"})";
    const std::optional<RequestBodyScan> scan = RequestBodyScan::scan(body);
    QVERIFY(scan);
    QCOMPARE(scan->members().size(), 5);
    QCOMPARE(scan->plainString("model"), QStringLiteral("gpt-4o"));
    QVERIFY(scan->plainString("esc").isNull()); // escaped: for the full parse to decode
    QVERIFY(scan->plainString("stream").isNull());
    QVERIFY(scan->plainString("absent").isNull());
    QCOMPARE(scan->value("stream"), QByteArrayView("true"));
    const std::optional<QJsonObject> head = scan->objectWithout({"messages", "input"});
    QVERIFY(head);
    QCOMPARE(head->keys(), QStringList({QStringLiteral("esc"), QStringLiteral("model"),
                                        QStringLiteral("stream"), QStringLiteral("tools")}));
    QCOMPARE(head->value(QStringLiteral("tools"))
                 .toArray()
                 .at(0)
                 .toObject()
                 .value(QStringLiteral("type"))
                 .toString(),
             QStringLiteral("code_interpreter"));
    QCOMPARE(head->value(QStringLiteral("esc")).toString(), QStringLiteral("a\nb"));
}

void TstRequestBodyScan::mutatedBodiesAgreeWithQt() {
    const QList<QByteArray> seeds = {
        R"({"model":"gpt-4o","messages":[{"role":"user","content":"hé ✓ \u00e9 \ud83d\ude00"}],"n":-1.5e-3,"s":true,"z":null})",
        R"({"a":[{},[],{"b":[1,2,{"c":"d"}]}],"e":"\"\\\/"})",
        // Long strings: scanned a block at a time, each kind of stop byte at another offset.
        R"({"model":"m","c":"abcdefghijklmnopqrstuvwxyz0123456789\n abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ\"KLMNOPQRSTUVWXYZ0123456789 é abcdefghijklmnopqrstuvwxyz"})",
    };
    const char replacements[] = {'"', '\\', '{', '}', '[', ']',    ',',    ':',    '0',   'e',
                                 '-', '.',  ' ', 'u', 'x', '\x01', '\x80', '\xc3', '\xff'};
    for (const QByteArray &seed : seeds) {
        checkAgainstQt(seed);
        QVERIFY(RequestBodyScan::scan(seed).has_value());
        for (qsizetype i = 0; i < seed.size(); ++i) {
            for (const char c : replacements) {
                QByteArray mutated = seed;
                mutated[i] = c;
                checkAgainstQt(mutated);
            }
            checkAgainstQt(QByteArray(seed).remove(i, 1));
            checkAgainstQt(QByteArray(seed).insert(i, seed.at(i)));
            if (QTest::currentTestFailed())
                return;
        }
    }
    QRandomGenerator random(34); // fixed seed: the same bodies every run
    for (int n = 0; n < 20000; ++n) {
        QByteArray mutated = seeds.at(n % seeds.size());
        for (int k = 0; k < 3; ++k)
            mutated[random.bounded(int(mutated.size()))] = char(random.bounded(256));
        checkAgainstQt(mutated);
        if (QTest::currentTestFailed())
            return;
    }
}

QTEST_GUILESS_MAIN(TstRequestBodyScan)
#include "tst_requestbodyscan.moc"
