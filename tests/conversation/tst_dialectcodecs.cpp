// Each dialect's codec against real samples (tests/fixtures/dialects, README there says where
// each came from): the vendor's stream, read by the one SSE reader in uneven pieces, adds up to
// the vendor's own final object.
#include "dialectfixtures.h"

#include "conversation/chatstreamwriter.h"
#include "conversation/dialect.h"
#include "conversation/messagescodec.h"
#include "conversation/responsesstreamwriter.h"
#include "conversation/ssedecoder.h"
#include "conversation/ssewriter.h"
#include "conversation/usage.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QtTest>

using namespace loopscope;
using namespace loopscope::fixtures;

namespace {

// The events of `bytes` fed `step` bytes at a time, as a socket may split them.
QJsonArray decodeInPieces(const QByteArray &bytes, qsizetype step) {
    SseDecoder decoder;
    QJsonArray events;
    for (qsizetype at = 0; at < bytes.size(); at += step)
        decoder.feed(bytes.mid(at, step), events);
    decoder.finish(events);
    return events;
}

// A stream as the codec of its dialect writes it for `response`.
QByteArray encode(Dialect dialect, const QJsonObject &response) {
    switch (dialect) {
    case Dialect::ChatCompletions:
        return ChatStreamWriter::replay(
            response, QJsonObject{{QStringLiteral("include_usage"),
                                   response.value(QStringLiteral("usage")).isObject()}});
    case Dialect::Messages:
        return MessagesCodec::streamFromMessage(response);
    case Dialect::Responses:
        break;
    }
    ResponsesStreamWriter writer;
    QJsonObject skeleton = response;
    skeleton.remove(QStringLiteral("output"));
    skeleton.insert(QStringLiteral("usage"), QJsonValue::Null);
    QByteArray out = writer.begin(skeleton);
    return out + writer.finish(response);
}

// The event names in order, pings left out and a run of the same delta counted once: a vendor
// splits text and arguments where it likes, the order of kinds is the contract.
QStringList eventKinds(const QJsonArray &events) {
    QStringList kinds;
    for (const QJsonValue &v : events) {
        const QJsonObject e = v.toObject();
        const QString name = e.value(QStringLiteral("event")).toString();
        if (name == QLatin1String("ping"))
            continue;
        QString kind = name;
        const QJsonObject delta =
            e.value(QStringLiteral("data")).toObject().value(QStringLiteral("delta")).toObject();
        if (name == QLatin1String("content_block_delta"))
            kind += u'/' + delta.value(QStringLiteral("type")).toString();
        if (name.endsWith(QLatin1String(".delta")) || name == QLatin1String("content_block_delta"))
            if (!kinds.isEmpty() && kinds.last() == kind)
                continue;
        kinds << kind;
    }
    return kinds;
}

} // namespace

class TestDialectCodecs : public QObject {
    Q_OBJECT

private slots:
    void streamsAddUpToTheFinalObject_data() {
        QTest::addColumn<QString>("name");
        const QStringList streams =
            QDir(fixtureDir()).entryList({QStringLiteral("*.sse")}, QDir::Files, QDir::Name);
        QVERIFY(streams.size() >= 8);
        for (const QString &file : streams) {
            const QString name = file.chopped(4);
            QTest::newRow(qPrintable(name)) << name;
        }
    }
    void streamsAddUpToTheFinalObject() {
        QFETCH(QString, name);
        const QByteArray sse = readFile(fixtureDir() + u'/' + name + QStringLiteral(".sse"));
        const QJsonObject expected =
            QJsonDocument::fromJson(readFile(fixtureDir() + u'/' + name + QStringLiteral(".json")))
                .object();
        QVERIFY(!expected.isEmpty());
        for (const qsizetype step : {qsizetype(1), qsizetype(7), sse.size()}) {
            const QJsonObject decoded =
                responseFromEvents(dialectOfFixture(name), decodeInPieces(sse, step));
            QVERIFY2(decoded == expected,
                     qPrintable(QString::fromUtf8(QJsonDocument(decoded).toJson())));
        }
    }

    // Decode → encode → decode gives the same object, and the encoded stream has the sample's
    // order of events (Responses, Messages). Chat Completions is checked on the object only: its
    // samples fold the role into the first tool-call chunk, the writer sends the role first.
    void encodingGivesTheSampleBack_data() { streamsAddUpToTheFinalObject_data(); }
    void encodingGivesTheSampleBack() {
        QFETCH(QString, name);
        const Dialect dialect = dialectOfFixture(name);
        const QByteArray sample = readFile(fixtureDir() + u'/' + name + QStringLiteral(".sse"));
        const QJsonArray sampleEvents = decodeInPieces(sample, sample.size());
        const QJsonObject decoded = responseFromEvents(dialect, sampleEvents);
        const QByteArray encoded = encode(dialect, decoded);
        const QJsonArray encodedEvents = decodeInPieces(encoded, 5);
        const QJsonObject again = responseFromEvents(dialect, encodedEvents);
        QVERIFY2(again == decoded, qPrintable(QString::fromUtf8(QJsonDocument(again).toJson())));
        if (dialect != Dialect::ChatCompletions)
            QCOMPARE(eventKinds(encodedEvents), eventKinds(sampleEvents));
    }

    // Wherever a socket splits a stream (CRLF and LF endings, a comment, a multi-line data
    // field, a last event without its blank line), the events are those of the whole stream.
    void decodingDoesNotDependOnTheSplits() {
        const QByteArray bytes = ": keep-alive\r\n"
                                 "event: first\r\ndata: {\"n\":1}\r\n\r\n"
                                 "data: two\ndata: lines\n\n"
                                 "id: 7\nevent: third\ndata: [1,2]\n\n"
                                 "data: {\"last\":true}";
        const QJsonArray whole = decodeInPieces(bytes, bytes.size());
        QCOMPARE(whole.size(), 4);
        QCOMPARE(whole.at(0).toObject().value(QStringLiteral("event")).toString(),
                 QStringLiteral("first"));
        QCOMPARE(whole.at(1).toObject().value(QStringLiteral("data")).toString(),
                 QStringLiteral("two\nlines"));
        QCOMPARE(whole.at(2).toObject().value(QStringLiteral("data")).toArray().size(), 2);
        QCOMPARE(whole.at(3).toObject().value(QStringLiteral("data")).toObject(),
                 (QJsonObject{{QStringLiteral("last"), true}}));
        for (qsizetype step = 1; step < bytes.size(); ++step)
            QVERIFY2(decodeInPieces(bytes, step) == whole, qPrintable(QString::number(step)));
    }

    // The reader and the writer agree: every event written reads back as it was.
    void writerAndReaderRoundTrip() {
        const QJsonObject data{{QStringLiteral("type"), QStringLiteral("x")},
                               {QStringLiteral("text"), QStringLiteral("two\nlines")}};
        const QByteArray bytes = SseWriter::frame("named", data) + SseWriter::frame({}, data) +
                                 SseWriter::frame("t", QByteArray("plain\ntext")) +
                                 SseWriter::done();
        const QJsonArray events = decodeInPieces(bytes, 3);
        QCOMPARE(events.size(), 4);
        QCOMPARE(events.at(0).toObject(),
                 (QJsonObject{{QStringLiteral("event"), QStringLiteral("named")},
                              {QStringLiteral("data"), data}}));
        QCOMPARE(events.at(1).toObject().value(QStringLiteral("event")).toString(),
                 QStringLiteral("message"));
        QCOMPARE(events.at(2).toObject().value(QStringLiteral("data")).toString(),
                 QStringLiteral("plain\ntext"));
        QCOMPARE(events.at(3).toObject().value(QStringLiteral("data")).toString(),
                 QStringLiteral("[DONE]"));

        // Each event's data as it came, for the recorder's first look before masking.
        SseDecoder decoder;
        QJsonArray again;
        QList<QByteArray> raw;
        const auto seen = [&raw](QByteArrayView data) { raw.append(data.toByteArray()); };
        for (qsizetype at = 0; at < bytes.size(); at += 3)
            decoder.feed(bytes.mid(at, 3), again, seen);
        decoder.finish(again, seen);
        QCOMPARE(again, events);
        QCOMPARE(raw.size(), 4);
        QCOMPARE(QJsonDocument::fromJson(raw.at(0)).object(), data);
        QCOMPARE(raw.at(2), QByteArray("plain\ntext"));
        QCOMPARE(raw.at(3), QByteArray("[DONE]"));
    }

    // A stream cut short still shows what arrived (the recorder and the window agree on it).
    void aResponsesStreamCutShortKeepsItsText() {
        const QByteArray sse =
            SseWriter::frame(
                "response.output_text.delta",
                QJsonObject{{QStringLiteral("type"), QStringLiteral("response.output_text.delta")},
                            {QStringLiteral("delta"), QStringLiteral("par")}}) +
            SseWriter::frame(
                "response.output_text.delta",
                QJsonObject{{QStringLiteral("type"), QStringLiteral("response.output_text.delta")},
                            {QStringLiteral("delta"), QStringLiteral("tial")}});
        const QJsonObject decoded =
            responseFromEvents(Dialect::Responses, decodeInPieces(sse, sse.size()));
        QCOMPARE(QJsonValue(decoded)[u"output"][0][u"content"][0][u"text"].toString(),
                 QStringLiteral("partial"));
        QCOMPARE(responseFromEvents(Dialect::Responses, {}), QJsonObject());
        QCOMPARE(responseFromEvents(Dialect::ChatCompletions, {}), QJsonObject());
        QCOMPARE(responseFromEvents(Dialect::Messages, {}), QJsonObject());
    }

    // One reading of usage for the recorder, OTLP and HAR, whatever the dialect wrote.
    void usageOfEveryDialect_data() {
        QTest::addColumn<QByteArray>("wire");
        QTest::addColumn<QList<qint64>>(
            "counts"); // input, output, total, reasoning, read, write, server
        QTest::addColumn<bool>("hasCache");
        QTest::newRow("responses")
            << QByteArray(R"({"input_tokens":84,"input_tokens_details":{"cached_tokens":64},
                "output_tokens":152,"output_tokens_details":{"reasoning_tokens":128},
                "total_tokens":236})")
            << QList<qint64>{84, 152, 236, 128, 64, 0, 0} << true;
        QTest::newRow("chat")
            << QByteArray(R"({"prompt_tokens":82,"completion_tokens":40,"total_tokens":122,
                "completion_tokens_details":{"reasoning_tokens":8}})")
            << QList<qint64>{82, 40, 122, 8, 0, 0, 0} << false;
        QTest::newRow("messages, no total")
            << QByteArray(R"({"input_tokens":472,"cache_creation_input_tokens":10,
                "cache_read_input_tokens":1024,"output_tokens":89,
                "server_tool_use":{"web_search_requests":2,"web_fetch_requests":1}})")
            << QList<qint64>{472, 89, 561, 0, 1024, 10, 3} << true;
        QTest::newRow("none") << QByteArray("{}") << QList<qint64>{0, 0, 0, 0, 0, 0, 0} << false;
    }
    void usageOfEveryDialect() {
        QFETCH(QByteArray, wire);
        QFETCH(QList<qint64>, counts);
        QFETCH(bool, hasCache);
        const Usage u = Usage::fromWire(QJsonDocument::fromJson(wire).object());
        QCOMPARE((QList<qint64>{u.input, u.output, u.total, u.reasoning, u.cacheRead, u.cacheWrite,
                                u.serverToolRequests}),
                 counts);
        QCOMPARE(u.hasCache, hasCache);
        QCOMPARE(u.hasInput, counts.first() > 0);
        QJsonObject stored{{QStringLiteral("input_tokens"), counts.at(0)},
                           {QStringLiteral("output_tokens"), counts.at(1)},
                           {QStringLiteral("total_tokens"), counts.at(2)}};
        if (hasCache) {
            stored.insert(QStringLiteral("cache_read_tokens"), counts.at(4));
            stored.insert(QStringLiteral("cache_write_tokens"), counts.at(5));
        }
        QCOMPARE(u.toJson(), stored);
    }

    void apiNamesOfPaths_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("api");
        QTest::newRow("responses") << "/v1/responses"
                                   << "responses";
        QTest::newRow("a response by id") << "/v1/responses/resp_1"
                                          << "responses";
        QTest::newRow("chat") << "/v1/chat/completions"
                              << "chat_completions";
        QTest::newRow("messages") << "/v1/messages"
                                  << "messages";
        QTest::newRow("without /v1") << "/messages"
                                     << "messages";
        QTest::newRow("models") << "/v1/models/gpt-4o"
                                << "models";
        QTest::newRow("containers") << "/v1/containers/c/files"
                                    << "containers";
        QTest::newRow("other") << "/v1/embeddings"
                               << "other";
    }
    void apiNamesOfPaths() {
        QFETCH(QString, path);
        QFETCH(QString, api);
        QCOMPARE(apiOfPath(path), api);
    }
};

QTEST_APPLESS_MAIN(TestDialectCodecs)
#include "tst_dialectcodecs.moc"
