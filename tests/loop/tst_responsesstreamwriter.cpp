#include "conversation/responsesstreamwriter.h"
#include "sseparser.h"

#include <QJsonArray>
#include <QTest>

using loopscope::ResponsesStreamWriter;

namespace {

QJsonObject ciItem(const QString &id, const QString &code, const QString &logs) {
    QJsonArray outputs;
    if (!logs.isEmpty())
        outputs.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("logs")},
                                   {QStringLiteral("logs"), logs}});
    return {{QStringLiteral("id"), id},
            {QStringLiteral("type"), QStringLiteral("code_interpreter_call")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("code"), code},
            {QStringLiteral("container_id"), QStringLiteral("cntr_1")},
            {QStringLiteral("outputs"), outputs}};
}

QJsonObject message(const QString &id, const QString &text) {
    return {{QStringLiteral("id"), id},
            {QStringLiteral("type"), QStringLiteral("message")},
            {QStringLiteral("role"), QStringLiteral("assistant")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("content"),
             QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("output_text")},
                                    {QStringLiteral("text"), text},
                                    {QStringLiteral("annotations"), QJsonArray()}}}}};
}

QStringList types(const QList<SseFrame> &frames) {
    QStringList out;
    for (const auto &f : frames)
        out << f.event;
    return out;
}

} // namespace

class TestResponsesStreamWriter : public QObject {
    Q_OBJECT
private slots:
    void liveSequenceMatchesOpenAiOrder() {
        ResponsesStreamWriter writer;
        QByteArray body = writer.begin({{QStringLiteral("model"), QStringLiteral("gpt-5")},
                                        {QStringLiteral("created_at"), 1}});
        const QString rid = writer.responseId();
        QVERIFY(rid.startsWith(QStringLiteral("resp_")));
        const QJsonObject first =
            ciItem(QStringLiteral("ci_a"), QStringLiteral("print(1)"), QStringLiteral("1\n"));
        body += writer.codeCallStarted(first);
        body += writer.codeCallFinished(first);
        QJsonObject final{
            {QStringLiteral("id"), QStringLiteral("resp_upstream")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("output"),
             QJsonArray{first, message(QStringLiteral("msg_1"), QStringLiteral("It is 1."))}}};
        body += writer.finish(final);

        const auto frames = parseSse(body);
        const QStringList expected{
            QStringLiteral("response.created"),
            QStringLiteral("response.in_progress"),
            QStringLiteral("response.output_item.added"),
            QStringLiteral("response.code_interpreter_call.in_progress"),
            QStringLiteral("response.code_interpreter_call_code.delta"),
            QStringLiteral("response.code_interpreter_call_code.done"),
            QStringLiteral("response.code_interpreter_call.interpreting"),
            QStringLiteral("response.code_interpreter_call.completed"),
            QStringLiteral("response.output_item.done"),
            QStringLiteral("response.output_item.added"),
            QStringLiteral("response.content_part.added"),
            QStringLiteral("response.output_text.delta"),
            QStringLiteral("response.output_text.done"),
            QStringLiteral("response.content_part.done"),
            QStringLiteral("response.output_item.done"),
            QStringLiteral("response.completed"),
        };
        QCOMPARE(types(frames), expected);
        for (int i = 0; i < frames.size(); ++i) {
            const QJsonObject json = frames[i].json();
            QCOMPARE(json.value(QStringLiteral("type")).toString(), frames[i].event);
            QCOMPARE(json.value(QStringLiteral("sequence_number")).toInt(-1), i);
        }
        // created and completed carry the same response id, even though upstream used another.
        QCOMPARE(frames.first().json()[QStringLiteral("response")][QStringLiteral("id")].toString(),
                 rid);
        const QJsonObject completed = frames.last().json()[QStringLiteral("response")].toObject();
        QCOMPARE(completed[QStringLiteral("id")].toString(), rid);
        QCOMPARE(completed[QStringLiteral("output")].toArray().size(), 2);
        // the code item was announced empty and in progress, then completed with its outputs
        const QJsonObject added = frames[2].json()[QStringLiteral("item")].toObject();
        QCOMPARE(added[QStringLiteral("status")].toString(), QStringLiteral("in_progress"));
        QCOMPARE(added[QStringLiteral("code")].toString(), QString());
        QCOMPARE(frames[4].json()[QStringLiteral("delta")].toString(), QStringLiteral("print(1)"));
        QCOMPARE(frames[8].json()[QStringLiteral("item")].toObject(), first);
        QCOMPARE(frames[9].json()[QStringLiteral("output_index")].toInt(), 1);
        QCOMPARE(frames[11].json()[QStringLiteral("delta")].toString(), QStringLiteral("It is 1."));
    }

    // An earlier round's reasoning and commentary are streamed when that round's answer
    // arrives: before its call, once, with the summary events OpenAI sends.
    void earlierRoundItemsKeepTheirPlace() {
        ResponsesStreamWriter writer;
        QByteArray body = writer.begin({{QStringLiteral("created_at"), 1}});
        const QJsonObject reasoning{
            {QStringLiteral("id"), QStringLiteral("rs_1")},
            {QStringLiteral("type"), QStringLiteral("reasoning")},
            {QStringLiteral("summary"),
             QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("summary_text")},
                                    {QStringLiteral("text"), QStringLiteral("Plan.")}}}},
            {QStringLiteral("encrypted_content"), QStringLiteral("gAAAA-sealed")}};
        const QJsonObject commentary = message(QStringLiteral("msg_c"), QStringLiteral("Let me."));
        const QJsonObject call =
            ciItem(QStringLiteral("ci_a"), QStringLiteral("print(1)"), QStringLiteral("1\n"));
        body += writer.modelItem(reasoning);
        body += writer.modelItem(commentary);
        body += writer.codeCallStarted(call);
        body += writer.codeCallFinished(call);
        const QJsonObject answer = message(QStringLiteral("msg_f"), QStringLiteral("1."));
        body += writer.finish(
            {{QStringLiteral("output"), QJsonArray{reasoning, commentary, call, answer}}});
        const QList<SseFrame> frames = parseSse(body);

        QStringList added;
        QList<int> indexes;
        for (const SseFrame &frame : frames) {
            if (frame.event != QLatin1String("response.output_item.added"))
                continue;
            added << frame.json()[QStringLiteral("item")][QStringLiteral("id")].toString();
            indexes << frame.json()[QStringLiteral("output_index")].toInt();
        }
        QCOMPARE(added, (QStringList{QStringLiteral("rs_1"), QStringLiteral("msg_c"),
                                     QStringLiteral("ci_a"), QStringLiteral("msg_f")}));
        QCOMPARE(indexes, (QList<int>{0, 1, 2, 3}));

        QCOMPARE(types(frames).mid(2, 6),
                 (QStringList{QStringLiteral("response.output_item.added"),
                              QStringLiteral("response.reasoning_summary_part.added"),
                              QStringLiteral("response.reasoning_summary_text.delta"),
                              QStringLiteral("response.reasoning_summary_text.done"),
                              QStringLiteral("response.reasoning_summary_part.done"),
                              QStringLiteral("response.output_item.done")}));
        const QJsonObject announced = frames.at(2).json()[QStringLiteral("item")].toObject();
        QCOMPARE(announced[QStringLiteral("summary")].toArray().size(), 0);
        QCOMPARE(announced[QStringLiteral("encrypted_content")].toString(),
                 QStringLiteral("gAAAA-sealed"));
        QCOMPARE(frames.at(4).json()[QStringLiteral("delta")].toString(), QStringLiteral("Plan."));
        QCOMPARE(frames.at(7).json()[QStringLiteral("item")].toObject(), reasoning);
        QCOMPARE(frames.last()
                     .json()[QStringLiteral("response")][QStringLiteral("output")]
                     .toArray()
                     .size(),
                 4);
    }

    void codeCallsNotStreamedLiveAreStreamedAtTheEnd() {
        ResponsesStreamWriter writer;
        QByteArray body = writer.begin({});
        body +=
            writer.finish({{QStringLiteral("output"),
                            QJsonArray{ciItem(QStringLiteral("ci_b"), QStringLiteral("x=1"), {}),
                                       message(QStringLiteral("msg_2"), QStringLiteral("ok"))}}});
        const auto frames = parseSse(body);
        QCOMPARE(types(frames).count(QStringLiteral("response.code_interpreter_call.completed")),
                 1);
        QCOMPARE(types(frames).count(QStringLiteral("response.output_item.done")), 2);
    }

    void itemsWithoutIdsGetStableIds() {
        ResponsesStreamWriter writer;
        QByteArray body = writer.begin({});
        QJsonObject msg = message(QString(), QStringLiteral("hi"));
        msg.remove(QStringLiteral("id"));
        body += writer.finish({{QStringLiteral("output"), QJsonArray{msg}}});
        const auto frames = parseSse(body);
        const QString addedId =
            frames[2].json()[QStringLiteral("item")][QStringLiteral("id")].toString();
        QVERIFY(addedId.startsWith(QStringLiteral("msg_")));
        const QJsonArray finalOutput =
            frames.last().json()[QStringLiteral("response")][QStringLiteral("output")].toArray();
        QCOMPARE(finalOutput.first()[QStringLiteral("id")].toString(), addedId);
    }

    void terminalEventFollowsStatus_data() {
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("terminal");
        QTest::newRow("completed")
            << QStringLiteral("completed") << QStringLiteral("response.completed");
        QTest::newRow("absent") << QString() << QStringLiteral("response.completed");
        QTest::newRow("incomplete")
            << QStringLiteral("incomplete") << QStringLiteral("response.incomplete");
        QTest::newRow("failed") << QStringLiteral("failed") << QStringLiteral("response.failed");
    }
    void terminalEventFollowsStatus() {
        QFETCH(QString, status);
        QFETCH(QString, terminal);
        ResponsesStreamWriter writer;
        QByteArray body = writer.begin({});
        QJsonObject final{{QStringLiteral("output"), QJsonArray()}};
        if (!status.isEmpty())
            final.insert(QStringLiteral("status"), status);
        body += writer.finish(final);
        QCOMPARE(parseSse(body).last().event, terminal);
    }

    void errorEventIsFlatOpenAiShape() {
        ResponsesStreamWriter writer;
        QByteArray body = writer.begin({});
        body += writer.error(QStringLiteral("upstream_error"),
                             QStringLiteral("scripted follow-up failure"));
        const auto frames = parseSse(body);
        QCOMPARE(frames.last().event, QStringLiteral("error"));
        const QJsonObject e = frames.last().json();
        QCOMPARE(e[QStringLiteral("message")].toString(),
                 QStringLiteral("scripted follow-up failure"));
        QCOMPARE(e[QStringLiteral("code")].toString(), QStringLiteral("upstream_error"));
        QCOMPARE(e[QStringLiteral("sequence_number")].toInt(), 2);
    }
};

QTEST_GUILESS_MAIN(TestResponsesStreamWriter)
#include "tst_responsesstreamwriter.moc"
