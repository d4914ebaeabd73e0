// Each dialect's codec both ways over every sample in tests/fixtures/dialects (README there says
// where each came from): decode → encode gives the vendor's JSON back (field order aside), and
// what it encodes decodes to the same model. Then the model written in the other dialects keeps
// what they can carry (text, calls, stop, usage), and values made here (no wire) come out in each
// dialect's own fields.
#include "dialectfixtures.h"

#include "conversation/dialect.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QtTest>

using namespace loopscope;
using namespace loopscope::fixtures;

namespace {

QJsonObject readJson(const QString &name) {
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(readFile(fixtureDir() + u'/' + name), &error);
    if (!doc.isObject())
        qFatal("%s: %s", qPrintable(name), qPrintable(error.errorString()));
    return doc.object();
}

bool isRequest(const QString &name) {
    return name.contains(QLatin1String("-request-"));
}

QByteArray compact(const QJsonObject &o) {
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

// What every dialect can carry of a response: its text and its calls.
QString gist(const ConversationResponse &r) {
    QStringList out;
    for (const ConversationItem &item : r.items) {
        if (item.kind == ConversationItem::Kind::Message && !item.text().isEmpty())
            out << QStringLiteral("text:") + item.text();
        else if (item.kind == ConversationItem::Kind::ToolCall &&
                 item.toolKind != ConversationItem::ToolKind::Hosted)
            out << QStringLiteral("call:%1:%2").arg(item.callId, item.name);
    }
    return out.join(u'|');
}

const QList<std::pair<Dialect, const char *>> kDialects = {{Dialect::Responses, "responses"},
                                                           {Dialect::ChatCompletions, "chat"},
                                                           {Dialect::Messages, "messages"}};

} // namespace

class DialectRoundTripTest : public QObject {
    Q_OBJECT

private slots:
    void decodeThenEncodeGivesTheSameJson_data();
    void decodeThenEncodeGivesTheSameJson();
    void encodedDecodesToTheSameModel_data() { decodeThenEncodeGivesTheSameJson_data(); }
    void encodedDecodesToTheSameModel();
    void otherDialectsKeepTextCallsStopAndUsage_data();
    void otherDialectsKeepTextCallsStopAndUsage();
    void stopAndUsageMadeHereAreTheDialectsOwnFields_data();
    void stopAndUsageMadeHereAreTheDialectsOwnFields();
    void reasoningMadeHereKeepsWhatTheVendorNeedsBack();
    void opaqueItemsGoBackByteForByte();
};

void DialectRoundTripTest::decodeThenEncodeGivesTheSameJson_data() {
    QTest::addColumn<QString>("name");
    const QStringList names =
        QDir(fixtureDir()).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    QVERIFY(names.size() >= 15);
    for (const QString &name : names)
        QTest::newRow(qPrintable(name)) << name;
}

void DialectRoundTripTest::decodeThenEncodeGivesTheSameJson() {
    QFETCH(QString, name);
    const QJsonObject original = readJson(name);
    const Dialect d = dialectOfFixture(name);
    const QJsonObject encoded = isRequest(name) ? encodeRequest(d, decodeRequest(d, original))
                                                : encodeResponse(d, decodeResponse(d, original));
    if (encoded != original)
        qWarning("encoded: %s\noriginal: %s", compact(encoded).constData(),
                 compact(original).constData());
    QCOMPARE(encoded, original);
}

void DialectRoundTripTest::encodedDecodesToTheSameModel() {
    QFETCH(QString, name);
    const QJsonObject original = readJson(name);
    const Dialect d = dialectOfFixture(name);
    if (isRequest(name)) {
        const ConversationRequest first = decodeRequest(d, original);
        const ConversationRequest again = decodeRequest(d, encodeRequest(d, first));
        QCOMPARE(again.model, first.model);
        QCOMPARE(again.instructions, first.instructions);
        QCOMPARE(again.stream, first.stream);
        QCOMPARE(again.items, first.items);
        QVERIFY(!first.items.isEmpty());
    } else {
        const ConversationResponse first = decodeResponse(d, original);
        const ConversationResponse again = decodeResponse(d, encodeResponse(d, first));
        QCOMPARE(again.id, first.id);
        QCOMPARE(again.error, first.error);
        QCOMPARE(again.items, first.items);
        QCOMPARE(again.stop, first.stop);
        QCOMPARE(again.stopDetail, first.stopDetail);
        QCOMPARE(again.usage, first.usage);
    }
}

void DialectRoundTripTest::otherDialectsKeepTextCallsStopAndUsage_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<Dialect>("target");
    const QStringList names =
        QDir(fixtureDir()).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (const QString &name : names) {
        if (isRequest(name) || name.contains(QLatin1String("-error")))
            continue;
        for (const auto &[target, label] : kDialects)
            QTest::addRow("%s in %s", qPrintable(name), label) << name << target;
    }
}

void DialectRoundTripTest::otherDialectsKeepTextCallsStopAndUsage() {
    QFETCH(QString, name);
    QFETCH(Dialect, target);
    const ConversationResponse source = decodeResponse(dialectOfFixture(name), readJson(name));
    const QJsonObject encoded = encodeResponse(target, source);
    const ConversationResponse back = decodeResponse(target, encoded);
    QCOMPARE(gist(back), gist(source));
    QCOMPARE(back.stop, source.stop);
    QCOMPARE(back.usage.input, source.usage.input);
    QCOMPARE(back.usage.output, source.usage.output);
    QCOMPARE(back.usage.cacheRead, source.usage.cacheRead);
    // Nothing of the source dialect's own shape leaks into the target's.
    if (target == Dialect::Messages)
        QVERIFY(!encoded.contains(QStringLiteral("choices")) &&
                !encoded.contains(QStringLiteral("output")));
    if (target == Dialect::ChatCompletions)
        QVERIFY(!encoded.contains(QStringLiteral("content")) &&
                !encoded.contains(QStringLiteral("output")));
    if (target == Dialect::Responses)
        QVERIFY(!encoded.contains(QStringLiteral("choices")) &&
                !encoded.contains(QStringLiteral("content")));
}

void DialectRoundTripTest::stopAndUsageMadeHereAreTheDialectsOwnFields_data() {
    QTest::addColumn<StopReason>("stop");
    QTest::addColumn<QString>("chat");
    QTest::addColumn<QString>("messages");
    QTest::addColumn<QString>("status");
    QTest::addColumn<QString>("incomplete");
    QTest::newRow("completed") << StopReason::Completed << QStringLiteral("stop")
                               << QStringLiteral("end_turn") << QStringLiteral("completed")
                               << QString();
    QTest::newRow("tool calls") << StopReason::ToolCalls << QStringLiteral("tool_calls")
                                << QStringLiteral("tool_use") << QStringLiteral("completed")
                                << QString();
    QTest::newRow("length") << StopReason::Length << QStringLiteral("length")
                            << QStringLiteral("max_tokens") << QStringLiteral("incomplete")
                            << QStringLiteral("max_output_tokens");
    QTest::newRow("filter") << StopReason::ContentFilter << QStringLiteral("content_filter")
                            << QStringLiteral("refusal") << QStringLiteral("incomplete")
                            << QStringLiteral("content_filter");
    QTest::newRow("paused") << StopReason::Paused << QStringLiteral("stop")
                            << QStringLiteral("pause_turn") << QStringLiteral("completed")
                            << QString();
}

void DialectRoundTripTest::stopAndUsageMadeHereAreTheDialectsOwnFields() {
    QFETCH(StopReason, stop);
    QFETCH(QString, chat);
    QFETCH(QString, messages);
    QFETCH(QString, status);
    QFETCH(QString, incomplete);
    ConversationResponse r;
    r.id = QStringLiteral("r1");
    r.stop = stop;
    r.usage.input = 100;
    r.usage.output = 20;
    r.usage.total = 120;
    r.usage.reasoning = 7;
    r.usage.cacheRead = 64;
    r.usage.hasInput = r.usage.hasOutput = r.usage.hasCache = true;

    const QJsonObject c = encodeResponse(Dialect::ChatCompletions, r);
    QCOMPARE(c.value(QStringLiteral("choices"))
                 .toArray()
                 .first()
                 .toObject()
                 .value(QStringLiteral("finish_reason"))
                 .toString(),
             chat);
    const QJsonObject cu = c.value(QStringLiteral("usage")).toObject();
    QCOMPARE(cu.value(QStringLiteral("prompt_tokens")).toInt(), 100);
    QCOMPARE(cu.value(QStringLiteral("completion_tokens")).toInt(), 20);
    QCOMPARE(cu.value(QStringLiteral("total_tokens")).toInt(), 120);
    QCOMPARE(cu.value(QStringLiteral("prompt_tokens_details"))
                 .toObject()
                 .value(QStringLiteral("cached_tokens"))
                 .toInt(),
             64);
    QCOMPARE(cu.value(QStringLiteral("completion_tokens_details"))
                 .toObject()
                 .value(QStringLiteral("reasoning_tokens"))
                 .toInt(),
             7);

    const QJsonObject m = encodeResponse(Dialect::Messages, r);
    QCOMPARE(m.value(QStringLiteral("stop_reason")).toString(), messages);
    QCOMPARE(
        m.value(QStringLiteral("usage")).toObject().value(QStringLiteral("input_tokens")).toInt(),
        100);
    QCOMPARE(
        m.value(QStringLiteral("usage")).toObject().value(QStringLiteral("output_tokens")).toInt(),
        20);
    QCOMPARE(m.value(QStringLiteral("usage"))
                 .toObject()
                 .value(QStringLiteral("cache_read_input_tokens"))
                 .toInt(),
             64);

    const QJsonObject o = encodeResponse(Dialect::Responses, r);
    QCOMPARE(o.value(QStringLiteral("status")).toString(), status);
    QCOMPARE(o.value(QStringLiteral("incomplete_details"))
                 .toObject()
                 .value(QStringLiteral("reason"))
                 .toString(),
             incomplete);
    const QJsonObject ou = o.value(QStringLiteral("usage")).toObject();
    QCOMPARE(ou.value(QStringLiteral("input_tokens")).toInt(), 100);
    QCOMPARE(ou.value(QStringLiteral("input_tokens_details"))
                 .toObject()
                 .value(QStringLiteral("cached_tokens"))
                 .toInt(),
             64);
    QCOMPARE(ou.value(QStringLiteral("output_tokens_details"))
                 .toObject()
                 .value(QStringLiteral("reasoning_tokens"))
                 .toInt(),
             7);
    QCOMPARE(ou.value(QStringLiteral("total_tokens")).toInt(), 120);
}

void DialectRoundTripTest::reasoningMadeHereKeepsWhatTheVendorNeedsBack() {
    ConversationItem thinking;
    thinking.kind = ConversationItem::Kind::Reasoning;
    thinking.summary << QStringLiteral("Let me think.");
    thinking.encryptedContent = QStringLiteral("sig-1");
    ConversationItem redacted;
    redacted.kind = ConversationItem::Kind::Reasoning;
    redacted.redacted = true;
    redacted.encryptedContent = QStringLiteral("EmwK");
    ConversationRequest request;
    request.items = {thinking, redacted};

    const QJsonArray blocks = encodeRequest(Dialect::Messages, request)
                                  .value(QStringLiteral("messages"))
                                  .toArray()
                                  .first()
                                  .toObject()
                                  .value(QStringLiteral("content"))
                                  .toArray();
    QCOMPARE(blocks.size(), 2);
    QCOMPARE(blocks.at(0).toObject(),
             (QJsonObject{{QStringLiteral("type"), QStringLiteral("thinking")},
                          {QStringLiteral("thinking"), QStringLiteral("Let me think.")},
                          {QStringLiteral("signature"), QStringLiteral("sig-1")}}));
    QCOMPARE(blocks.at(1).toObject(),
             (QJsonObject{{QStringLiteral("type"), QStringLiteral("redacted_thinking")},
                          {QStringLiteral("data"), QStringLiteral("EmwK")}}));

    const QJsonObject item = encodeRequest(Dialect::Responses, request)
                                 .value(QStringLiteral("input"))
                                 .toArray()
                                 .first()
                                 .toObject();
    QCOMPARE(item.value(QStringLiteral("type")).toString(), QStringLiteral("reasoning"));
    QCOMPARE(item.value(QStringLiteral("encrypted_content")).toString(), QStringLiteral("sig-1"));
    QCOMPARE(item.value(QStringLiteral("summary"))
                 .toArray()
                 .first()
                 .toObject()
                 .value(QStringLiteral("text"))
                 .toString(),
             QStringLiteral("Let me think."));
}

void DialectRoundTripTest::opaqueItemsGoBackByteForByte() {
    const QByteArray unknown =
        R"({QStringLiteral("type"):QStringLiteral("mcp_list_tools"),QStringLiteral("id"):"mcpl_1",QStringLiteral("server_label"):QStringLiteral("x"),QStringLiteral("tools"):[{QStringLiteral("name"):QStringLiteral("n"),QStringLiteral("input_schema"):{QStringLiteral("a"):[1,2.5,null,"\u00e9"]}}],QStringLiteral("vendor_extra"):{QStringLiteral("deep"):true}})";
    const QJsonObject body{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), QJsonArray{QJsonDocument::fromJson(unknown).object()}}};
    const ConversationRequest request = decodeRequest(Dialect::Responses, body);
    QCOMPARE(request.items.first().kind, ConversationItem::Kind::Opaque);
    const QJsonObject again = encodeRequest(Dialect::Responses, request)
                                  .value(QStringLiteral("input"))
                                  .toArray()
                                  .first()
                                  .toObject();
    QCOMPARE(
        QJsonDocument(again).toJson(QJsonDocument::Compact),
        QJsonDocument(QJsonDocument::fromJson(unknown).object()).toJson(QJsonDocument::Compact));
}

QTEST_GUILESS_MAIN(DialectRoundTripTest)
#include "tst_dialectroundtrip.moc"
