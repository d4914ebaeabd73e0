#include "conversation/chatstreamwriter.h"
#include "sseparser.h"

#include <QJsonArray>
#include <QTest>

using loopscope::ChatStreamWriter;

namespace {

QJsonObject completion(const QString &content) {
    return {
        {QStringLiteral("id"), QStringLiteral("chatcmpl-1")},
        {QStringLiteral("object"), QStringLiteral("chat.completion")},
        {QStringLiteral("created"), 1700000000},
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("choices"),
         QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                {QStringLiteral("message"),
                                 QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                             {QStringLiteral("content"), content}}},
                                {QStringLiteral("finish_reason"), QStringLiteral("stop")}}}},
        {QStringLiteral("usage"), QJsonObject{{QStringLiteral("prompt_tokens"), 20},
                                              {QStringLiteral("completion_tokens"), 8},
                                              {QStringLiteral("total_tokens"), 28}}}};
}

} // namespace

class TestChatStreamWriter : public QObject {
    Q_OBJECT
private slots:
    void usageChunkOnlyWhenAskedFor_data() {
        QTest::addColumn<QByteArray>("streamOptions"); // JSON text of the value, empty = absent
        QTest::addColumn<bool>("usageChunk");
        QTest::newRow("include_usage true") << QByteArray("{\"include_usage\":true}") << true;
        QTest::newRow("include_usage false") << QByteArray("{\"include_usage\":false}") << false;
        QTest::newRow("absent") << QByteArray() << false;
        QTest::newRow("null") << QByteArray("null") << false;
        QTest::newRow("empty object") << QByteArray("{}") << false;
        QTest::newRow("number") << QByteArray("5") << false;
        QTest::newRow("array") << QByteArray("[{\"include_usage\":true}]") << false;
        QTest::newRow("empty string") << QByteArray("\"\"") << false;
        QTest::newRow("string true") << QByteArray("{\"include_usage\":\"true\"}") << false;
    }
    void usageChunkOnlyWhenAskedFor() {
        QFETCH(QByteArray, streamOptions);
        QFETCH(bool, usageChunk);
        QJsonValue options = QJsonValue::Undefined;
        if (!streamOptions.isEmpty())
            options = QJsonDocument::fromJson("[" + streamOptions + "]").array().first();
        const auto frames =
            parseSse(ChatStreamWriter::replay(completion(QStringLiteral("391")), options));
        QCOMPARE(frames.last().data, QByteArray("[DONE]"));
        int usageFrames = 0;
        QString text;
        for (int i = 0; i + 1 < frames.size(); ++i) {
            const QJsonObject chunk = frames[i].json();
            QCOMPARE(chunk[QStringLiteral("id")].toString(), QStringLiteral("chatcmpl-1"));
            QCOMPARE(chunk[QStringLiteral("object")].toString(),
                     QStringLiteral("chat.completion.chunk"));
            if (chunk[QStringLiteral("usage")].isObject()) {
                ++usageFrames;
                QCOMPARE(i, frames.size() - 2); // the usage chunk is the last before [DONE]
                QVERIFY(chunk[QStringLiteral("choices")].toArray().isEmpty());
                QCOMPARE(chunk[QStringLiteral("usage")][QStringLiteral("total_tokens")].toInt(),
                         28);
            }
            for (const auto &c : chunk[QStringLiteral("choices")].toArray())
                text += c[QStringLiteral("delta")][QStringLiteral("content")].toString();
        }
        QCOMPARE(usageFrames, usageChunk ? 1 : 0);
        QCOMPARE(text, QStringLiteral("391"));
    }

    void finishReasonAndToolCallsCarried() {
        QJsonObject c = completion(QString());
        QJsonArray choices = c[QStringLiteral("choices")].toArray();
        QJsonObject choice = choices[0].toObject();
        QJsonObject msg = choice[QStringLiteral("message")].toObject();
        msg.insert(QStringLiteral("tool_calls"),
                   QJsonArray{QJsonObject{
                       {QStringLiteral("id"), QStringLiteral("call_u")},
                       {QStringLiteral("type"), QStringLiteral("function")},
                       {QStringLiteral("function"),
                        QJsonObject{{QStringLiteral("name"), QStringLiteral("user_fn")},
                                    {QStringLiteral("arguments"), QStringLiteral("{}")}}}}});
        choice.insert(QStringLiteral("message"), msg);
        choice.insert(QStringLiteral("finish_reason"), QStringLiteral("tool_calls"));
        choices[0] = choice;
        c.insert(QStringLiteral("choices"), choices);
        const auto frames = parseSse(ChatStreamWriter::replay(c, QJsonValue::Undefined));
        bool sawTool = false;
        QString finish;
        for (const auto &f : frames) {
            if (f.data == "[DONE]")
                continue;
            const QJsonObject delta =
                f.json()[QStringLiteral("choices")][0][QStringLiteral("delta")].toObject();
            if (delta.contains(QStringLiteral("tool_calls"))) {
                sawTool = true;
                QCOMPARE(delta[QStringLiteral("tool_calls")][0][QStringLiteral("index")].toInt(),
                         0);
            }
            const QJsonValue fr =
                f.json()[QStringLiteral("choices")][0][QStringLiteral("finish_reason")];
            if (fr.isString())
                finish = fr.toString();
        }
        QVERIFY(sawTool);
        QCOMPARE(finish, QStringLiteral("tool_calls"));
    }

    void errorFrameIsWhatSdksRaiseOn() {
        const auto frames = parseSse(ChatStreamWriter::error(
            QStringLiteral("upstream_error"), QStringLiteral("scripted follow-up failure")));
        QCOMPARE(frames.size(), 1);
        const QJsonObject err = frames[0].json()[QStringLiteral("error")].toObject();
        QCOMPARE(err[QStringLiteral("message")].toString(),
                 QStringLiteral("scripted follow-up failure"));
        QCOMPARE(err[QStringLiteral("type")].toString(), QStringLiteral("upstream_error"));
    }
};

QTEST_GUILESS_MAIN(TestChatStreamWriter)
#include "tst_chatstreamwriter.moc"
