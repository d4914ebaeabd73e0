// A loop that forgets nothing the model said (dialects.md §2), through the production driver:
// a ScriptedUpstream answering like a reasoning model (reasoning with encrypted_content, a
// commentary message, then the call), a RecordingSandboxBackend, production code in between.
// What the upstream receives as follow-ups, and what the client gets, JSON and streamed.
#include "interception/codeinterpreterinterception.h"
#include "loop/loopdriver.h"
#include "loopfixtures.h"
#include "sandbox/sandboxregistry.h"
#include "sseparser.h"
#include "support/futurewait.h"
#include "support/recordingsandboxbackend.h"

#include <QJsonArray>
#include <QTest>

using namespace loopscope;
using loopscope::test::LoopDriver;
using loopscope::test::ScriptedUpstream;
using namespace loopfixtures;

namespace {

QJsonObject ciRequest(const QJsonObject &extra = {}) {
    QJsonObject body{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), QStringLiteral("compute")},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")}}}}};
    for (auto it = extra.begin(); it != extra.end(); ++it)
        body.insert(it.key(), it.value());
    return body;
}

QJsonObject itemById(const QJsonArray &items, const QString &id) {
    for (const QJsonValue &item : items)
        if (item.toObject().value(QStringLiteral("id")).toString() == id)
            return item.toObject();
    return {};
}

qsizetype indexOf(const QJsonArray &items, const QString &key, const QString &value) {
    for (qsizetype i = 0; i < items.size(); ++i)
        if (items.at(i).toObject().value(key).toString() == value)
            return i;
    return -1;
}

QStringList idsOf(const QJsonArray &items) {
    QStringList ids;
    for (const QJsonValue &item : items)
        ids << item.toObject().value(QStringLiteral("id")).toString();
    return ids;
}

QStringList typesOf(const QJsonArray &items) {
    QStringList types;
    for (const QJsonValue &item : items)
        types << item.toObject().value(QStringLiteral("type")).toString();
    return types;
}

// "a,b,c" as a list (the build forbids implicit casts from char strings).
QStringList names(const char *commaSeparated) {
    return QString::fromLatin1(commaSeparated).split(u',');
}

QJsonObject functionCallOutput(const QString &callId) {
    return {{QStringLiteral("type"), QStringLiteral("function_call_output")},
            {QStringLiteral("call_id"), callId},
            {QStringLiteral("output"), QStringLiteral("42")}};
}

} // namespace

class TestLoopFidelity : public QObject {
    Q_OBJECT

    std::unique_ptr<SandboxRegistry> registry;
    std::unique_ptr<RecordingSandboxBackend> sandbox;
    std::unique_ptr<CodeInterpreterInterception> interception;

    // The client's final response: the JSON body, or what response.completed carries, after
    // checking that the stream announced every item in that order (output_index 0, 1, ...).
    static QJsonObject finalResponse(const QByteArray &body, bool stream) {
        if (!stream)
            return QJsonDocument::fromJson(body).object();
        const QList<SseFrame> frames = parseSse(body);
        if (frames.isEmpty() || frames.last().event != QLatin1String("response.completed"))
            return {};
        const QJsonObject completed =
            frames.last().json().value(QStringLiteral("response")).toObject();
        QStringList announced;
        for (const SseFrame &frame : frames) {
            if (frame.event != QLatin1String("response.output_item.added"))
                continue;
            const QJsonObject event = frame.json();
            if (event.value(QStringLiteral("output_index")).toInt() != announced.size())
                return {}; // out of order: the SDK would refuse it
            announced << event.value(QStringLiteral("item"))
                             .toObject()
                             .value(QStringLiteral("id"))
                             .toString();
        }
        if (announced != idsOf(completed.value(QStringLiteral("output")).toArray()))
            return {};
        return completed;
    }

private slots:
    void init() {
        registry = std::make_unique<SandboxRegistry>();
        sandbox = std::make_unique<RecordingSandboxBackend>();
        sandbox->uniqueIds = true;
        interception = std::make_unique<CodeInterpreterInterception>(InterceptionSettings{},
                                                                     registry.get(), sandbox.get());
    }
    void cleanup() {
        awaitFuture(registry->removeAll());
        interception.reset();
        sandbox.reset();
        registry.reset();
    }

    void followUpsCarryTheModelsWholeTurns_data() {
        QTest::addColumn<bool>("stream");
        QTest::newRow("json") << false;
        QTest::newRow("stream") << true;
    }
    void followUpsCarryTheModelsWholeTurns() {
        QFETCH(bool, stream);
        LoopDriver loop(interception.get());
        const QJsonObject turn1 =
            responsesReasoningCall(QStringLiteral("print(6*7)"), QStringLiteral("1"));
        const QJsonObject turn2 =
            responsesReasoningCall(QStringLiteral("print(42)"), QStringLiteral("2"));
        loop.upstream.enqueue(ScriptedUpstream::Response::json(turn1));
        loop.upstream.enqueue(ScriptedUpstream::Response::json(turn2));
        loop.upstream.enqueue(
            ScriptedUpstream::Response::json(responsesReasonedMessage(QStringLiteral("42."))));
        QJsonObject extra;
        if (stream)
            extra.insert(QStringLiteral("stream"), true);
        const auto reply = loop.post("/v1/responses", ciRequest(extra));
        QCOMPARE(reply.status, 200);
        QCOMPARE(loop.upstream.requestCount(), 3);

        // Each follow-up: everything before it, then the model's last turn as received, its
        // reasoning (with encrypted_content) before its call, then the result.
        const QJsonArray items1 = turn1.value(QStringLiteral("output")).toArray();
        const QJsonArray items2 = turn2.value(QStringLiteral("output")).toArray();
        const QJsonObject user{{QStringLiteral("role"), QStringLiteral("user")},
                               {QStringLiteral("content"), QStringLiteral("compute")}};
        const QJsonArray second =
            loop.upstream.requests().at(1).json().value(QStringLiteral("input")).toArray();
        QCOMPARE(second, (QJsonArray{user, items1.at(0), items1.at(1), items1.at(2),
                                     functionCallOutput(QStringLiteral("call_1"))}));
        QCOMPARE(itemById(second, QStringLiteral("rs_1"))
                     .value(QStringLiteral("encrypted_content"))
                     .toString(),
                 QStringLiteral("gAAAA-enc-1"));
        QVERIFY(indexOf(second, QStringLiteral("id"), QStringLiteral("rs_1")) <
                indexOf(second, QStringLiteral("call_id"), QStringLiteral("call_1")));
        const QJsonArray third =
            loop.upstream.requests().at(2).json().value(QStringLiteral("input")).toArray();
        QJsonArray expectedThird = second;
        for (const QJsonValue &item : {items2.at(0), items2.at(1), items2.at(2)})
            expectedThird.append(item);
        expectedThird.append(functionCallOutput(QStringLiteral("call_2")));
        QCOMPARE(third, expectedThird);
        for (int i = 1; i < 3; ++i)
            QVERIFY(!loop.upstream.requests().at(i).json().contains(
                QStringLiteral("previous_response_id")));

        // The client: every round's reasoning and commentary, then its call, as it happened.
        const QJsonObject response = finalResponse(reply.body, stream);
        const QJsonArray output = response.value(QStringLiteral("output")).toArray();
        QCOMPARE(
            typesOf(output),
            names("reasoning,message,code_interpreter_call,reasoning,message,code_interpreter_call,"
                  "reasoning,message"));
        const QStringList ids = idsOf(output);
        QCOMPARE(ids.at(0), QStringLiteral("rs_1"));
        QCOMPARE(ids.at(1), QStringLiteral("msg_c1"));
        QCOMPARE(ids.at(3), QStringLiteral("rs_2"));
        QCOMPARE(ids.at(4), QStringLiteral("msg_c2"));
        QCOMPARE(ids.mid(6), names("rs_final,msg_final"));
        QCOMPARE(output.at(0).toObject(), items1.at(0).toObject());
        QCOMPARE(output.at(2).toObject().value(QStringLiteral("code")).toString(),
                 QStringLiteral("print(6*7)"));
        QVERIFY(!reply.body.contains("litellm_code_execution"));
        if (stream) {
            // The reasoning summary is streamed as OpenAI streams one.
            bool summarized = false;
            for (const SseFrame &frame : parseSse(reply.body))
                summarized |=
                    frame.event == QLatin1String("response.reasoning_summary_text.done") &&
                    frame.json().value(QStringLiteral("item_id")).toString() ==
                        QLatin1String("rs_1") &&
                    frame.json().value(QStringLiteral("text")).toString() ==
                        QLatin1String("I should run code.");
            QVERIFY(summarized);
        }
        QVERIFY(loop.idle());
    }

    // A client that keeps state upstream: each follow-up chains from the upstream answer it
    // answers and sends only the new result.
    void statefulFollowUpsChainFromTheAnsweredResponse_data() {
        QTest::addColumn<QJsonObject>("state");
        QTest::addColumn<QJsonValue>("clientPrevious"); // what the client's response echoes
        QTest::newRow("previous_response_id")
            << QJsonObject{{QStringLiteral("previous_response_id"), QStringLiteral("resp_client")}}
            << QJsonValue(QStringLiteral("resp_client"));
        QTest::newRow("store: true")
            << QJsonObject{{QStringLiteral("store"), true}} << QJsonValue(QJsonValue::Null);
    }
    void statefulFollowUpsChainFromTheAnsweredResponse() {
        QFETCH(QJsonObject, state);
        QFETCH(QJsonValue, clientPrevious);
        LoopDriver loop(interception.get());
        loop.upstream.setResponder([](const ScriptedUpstream::Request &request) {
            // A stateful upstream answers a chained request after the response it names.
            const QJsonObject body = request.json();
            QJsonObject answer;
            const QString previous = body.value(QStringLiteral("previous_response_id")).toString();
            if (previous == QLatin1String("resp_turn1"))
                answer = responsesReasoningCall(QStringLiteral("print(2)"), QStringLiteral("2"));
            else if (previous == QLatin1String("resp_turn2"))
                answer = responsesReasonedMessage(QStringLiteral("done"));
            else
                answer = responsesReasoningCall(QStringLiteral("print(1)"), QStringLiteral("1"));
            answer.insert(QStringLiteral("previous_response_id"),
                          body.value(QStringLiteral("previous_response_id")));
            return ScriptedUpstream::Response::json(answer);
        });
        const auto reply = loop.post("/v1/responses", ciRequest(state));
        QCOMPARE(reply.status, 200);
        QCOMPARE(loop.upstream.requestCount(), 3);
        const QJsonObject first = loop.upstream.requests().at(0).json();
        QCOMPARE(first.value(QStringLiteral("previous_response_id")),
                 state.value(QStringLiteral("previous_response_id")));
        for (int round = 1; round < 3; ++round) {
            const QJsonObject sent = loop.upstream.requests().at(round).json();
            QCOMPARE(sent.value(QStringLiteral("previous_response_id")).toString(),
                     QStringLiteral("resp_turn%1").arg(round));
            QCOMPARE(sent.value(QStringLiteral("input")).toArray(),
                     QJsonArray{functionCallOutput(QStringLiteral("call_%1").arg(round))});
        }
        const QJsonObject response = reply.json();
        QCOMPARE(
            typesOf(response.value(QStringLiteral("output")).toArray()),
            names("reasoning,message,code_interpreter_call,reasoning,message,code_interpreter_call,"
                  "reasoning,message"));
        // The client asked after its own response, not after the loop's internal round.
        QCOMPARE(response.value(QStringLiteral("previous_response_id")), clientPrevious);
        QVERIFY(loop.idle());
    }
};

QTEST_GUILESS_MAIN(TestLoopFidelity)
#include "tst_loopfidelity.moc"
