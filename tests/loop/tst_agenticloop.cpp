// The agentic loop end to end inside one process: real loopback HTTP in front, a scripted
// OpenAI-compatible upstream behind, and real bubblewrap Python sandboxes in between.
#include "inspect/eventbus.h"
#include "loopfixtures.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "sandbox/local/localpythonbackend.h"
#include "sandbox/sandboxregistry.h"
#include "sseparser.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;
using namespace loopfixtures;

namespace {

const QByteArray kKeyA = "Bearer sk-loop-test-user-a-0001";
const QByteArray kKeyB = "Bearer sk-loop-test-user-b-0002";

QJsonObject ciRequest(const QString &input, bool stream = false) {
    QJsonObject body{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), input},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"),
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
    if (stream)
        body.insert(QStringLiteral("stream"), true);
    return body;
}

QJsonObject chatRequest(const QString &content) {
    return {
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("messages"),
         QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                {QStringLiteral("content"), content}}}},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")}}}}};
}

QStringList outputTypes(const QJsonObject &response) {
    QStringList types;
    for (const auto &item : response.value(QStringLiteral("output")).toArray())
        types << item.toObject().value(QStringLiteral("type")).toString();
    return types;
}

QStringList keysStartingWithUnderscore(const QJsonObject &o) {
    QStringList out;
    for (auto it = o.begin(); it != o.end(); ++it)
        if (it.key().startsWith(u'_'))
            out << it.key();
    return out;
}

} // namespace

class TestAgenticLoop : public QObject {
    Q_OBJECT

    std::unique_ptr<ScriptedUpstream> upstream;
    std::unique_ptr<EventBus> bus;
    std::unique_ptr<ProxyServer> server;
    std::unique_ptr<InterceptionStack> stack;

    RawHttpClient::Response call(const QByteArray &method, const QByteArray &path,
                                 const QJsonObject &body = {}, const QByteArray &auth = kKeyA) {
        RawHttpClient client(server->port());
        client.request(method, path,
                       body.isEmpty() ? QByteArray()
                                      : QJsonDocument(body).toJson(QJsonDocument::Compact),
                       {{"authorization", auth}, {"content-type", "application/json"}});
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 60000))
            return {};
        return client.take();
    }

    bool sandboxesGone() {
        return QTest::qWaitFor([this] { return stack->registry()->size() == 0; }, 20000);
    }

    // The tool result Loopscope fed the model in the n-th upstream request (its last input).
    QString lastToolOutputSentInRequest(int n) const {
        return upstream->requests()[n]
            .json()[QStringLiteral("input")]
            .toArray()
            .last()[QStringLiteral("output")]
            .toString();
    }

private slots:
    void init() {
        upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(upstream->listen());
        bus = std::make_unique<EventBus>();
        ProxyConfig config;
        config.port = 0;
        QString error;
        config.defaultRoute = ProxyConfig::routeForUpstream(upstream->baseUrl(), &error);
        QVERIFY2(config.defaultRoute, qPrintable(error));
        server = std::make_unique<ProxyServer>(config);
        stack = std::make_unique<InterceptionStack>(server.get(), bus.get());
        LocalSandboxOptions options;
        options.poolSize = 1;
        QVERIFY2(stack->init(options, &error), qPrintable(error));
        QVERIFY(server->listen());
    }

    void cleanup() {
        if (stack) {
            auto done = stack->shutdown();
            QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 20000));
            QCOMPARE(stack->localBackend()->sandboxIds().size(), 0);
        }
        stack.reset();
        server.reset();
        upstream.reset();
        bus.reset();
    }

    void responsesLoopRunsCodeAndFeedsOutputBack() {
        upstream->enqueue(
            ScriptedUpstream::Response::json(responsesFunctionCall(QStringLiteral("print(6*7)"))));
        upstream->enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("It is 42."))));
        QSignalSpy events(bus.get(), &EventBus::eventPublished);

        const auto reply = call("POST", "/v1/responses", ciRequest(QStringLiteral("what is 6*7?")));
        QCOMPARE(reply.status, 200);
        const QJsonObject response = reply.json();
        QCOMPARE(outputTypes(response),
                 (QStringList{QStringLiteral("code_interpreter_call"), QStringLiteral("message")}));
        const QJsonObject ci = response[QStringLiteral("output")][0].toObject();
        QCOMPARE(ci.keys().size(), 6);
        QCOMPARE(ci[QStringLiteral("code")].toString(), QStringLiteral("print(6*7)"));
        QCOMPARE(ci[QStringLiteral("outputs")][0][QStringLiteral("logs")].toString(),
                 QStringLiteral("42\n"));
        QVERIFY(ci[QStringLiteral("container_id")].toString().startsWith(QStringLiteral("cntr_")));
        QVERIFY(!reply.body.contains("litellm_code_execution"));

        QCOMPARE(upstream->requestCount(), 2);
        const QJsonObject first = upstream->requests()[0].json();
        const QJsonObject second = upstream->requests()[1].json();
        for (const QJsonObject &sent : {first, second}) {
            QCOMPARE(keysStartingWithUnderscore(sent), QStringList());
            QVERIFY(!sent.contains(QStringLiteral("litellm_metadata")));
            QVERIFY(!sent.contains(QStringLiteral("user_api_key_hash")));
            QCOMPARE(sent[QStringLiteral("tools")][0][QStringLiteral("name")].toString(),
                     QStringLiteral("litellm_code_execution"));
        }
        const QJsonArray input = second[QStringLiteral("input")].toArray();
        QCOMPARE(input.last()[QStringLiteral("type")].toString(),
                 QStringLiteral("function_call_output"));
        QCOMPARE(input.last()[QStringLiteral("output")].toString(), QStringLiteral("42\n"));
        QVERIFY(sandboxesGone());

        QStringList kinds;
        auto collect = [&] {
            kinds.clear();
            for (const auto &args : events)
                kinds << InspectorEvent::kindName(args.at(0).value<InspectorEvent>().kind);
            return kinds.contains(QStringLiteral("sandbox.deleted"));
        };
        QVERIFY(QTest::qWaitFor(collect, 20000)); // the delete finishes after the response
        for (const char *expected :
             {"request.started", "upstream.call", "sandbox.created", "code.executed",
              "outputs.injected", "request.finished", "sandbox.deleted"})
            QVERIFY2(kinds.contains(QLatin1String(expected)), qPrintable(kinds.join(u',')));
    }

    // The client's logs are what the program printed; what Loopscope tells the model about the
    // picture and the file it produced is in the model's tool result only.
    void clientLogsAreExactlyWhatTheProgramPrinted() {
        const QString code = QStringLiteral("import matplotlib.pyplot as plt\n"
                                            "print('only this')\n"
                                            "plt.figure(figsize=(2, 1), dpi=50)\n"
                                            "plt.plot([1, 2, 3])\n"
                                            "plt.show()\n"
                                            "open('/mnt/data/o.txt', 'w').write('x')\n");
        upstream->enqueue(ScriptedUpstream::Response::json(responsesFunctionCall(code)));
        upstream->enqueue(ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("ok"))));
        const auto reply = call("POST", "/v1/responses", ciRequest(QStringLiteral("plot")));
        QCOMPARE(reply.status, 200);
        const QJsonObject ci = reply.json()[QStringLiteral("output")][0].toObject();
        QCOMPARE(ci[QStringLiteral("type")].toString(), QStringLiteral("code_interpreter_call"));
        const QJsonArray outputs = ci[QStringLiteral("outputs")].toArray();
        QCOMPARE(outputs.size(), 2);
        QCOMPARE(outputs[0].toObject(),
                 (QJsonObject{{QStringLiteral("type"), QStringLiteral("logs")},
                              {QStringLiteral("logs"), QStringLiteral("only this\n")}}));
        QCOMPARE(outputs[1][QStringLiteral("type")].toString(), QStringLiteral("image"));

        QCOMPARE(upstream->requestCount(), 2);
        const QString fed = lastToolOutputSentInRequest(1);
        QVERIFY2(fed.startsWith(QStringLiteral("only this\n[image image-1.png (image/png, ")),
                 qPrintable(fed));
        QVERIFY2(
            fed.endsWith(QStringLiteral(
                "[file /mnt/data/o.txt (1 bytes) saved; link it as sandbox:/mnt/data/o.txt]\n")),
            qPrintable(fed));
        QVERIFY(sandboxesGone());
    }

    // Output past the sandbox's cap: the client's logs are the first MiB exactly as printed,
    // and only the model is told that the rest was cut.
    void outputPastTheCapIsCutWithANoteForTheModelOnly() {
        upstream->enqueue(ScriptedUpstream::Response::json(
            responsesFunctionCall(QStringLiteral("print('x' * (1024 * 1024 + 100))"))));
        upstream->enqueue(ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("ok"))));
        const auto reply = call("POST", "/v1/responses", ciRequest(QStringLiteral("a lot")));
        QCOMPARE(reply.status, 200);
        const QString logs = reply
                                 .json()[QStringLiteral("output")][0][QStringLiteral("outputs")][0]
                                        [QStringLiteral("logs")]
                                 .toString();
        QCOMPARE(logs, QString(1024 * 1024, QLatin1Char('x')));
        QCOMPARE(upstream->requestCount(), 2);
        // The model's copy is cut again to sandbox.max_output_chars (head and tail); the note is
        // in its tail.
        const QString fed = lastToolOutputSentInRequest(1);
        QVERIFY(fed.startsWith(QStringLiteral("xxxxxxxx")));
        QVERIFY2(fed.endsWith(QStringLiteral("xxxx\n[loopscope] stdout truncated: 101 more bytes "
                                             "not shown; the limit is 1048576 bytes\n")),
                 qPrintable(fed.right(200)));
        QVERIFY(sandboxesGone());
    }

    // After an exception the model sees what the code printed first and where it failed; the
    // client sees the output and Python's traceback, without the model's error label.
    void anExceptionShowsTheModelStdoutAndTraceback() {
        upstream->enqueue(ScriptedUpstream::Response::json(
            responsesFunctionCall(QStringLiteral("print('step 1')\n1 / 0\n"))));
        upstream->enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("It failed."))));
        const auto reply = call("POST", "/v1/responses", ciRequest(QStringLiteral("divide")));
        QCOMPARE(reply.status, 200);
        QCOMPARE(upstream->requestCount(), 2);
        const QString fed = lastToolOutputSentInRequest(1);
        QVERIFY2(fed.startsWith(QStringLiteral("step 1\n[execution error] division by zero\n"
                                               "Traceback (most recent call last):\n")),
                 qPrintable(fed));
        QVERIFY2(fed.endsWith(QStringLiteral("ZeroDivisionError: division by zero\n")),
                 qPrintable(fed));
        QVERIFY2(fed.contains(QStringLiteral("line 2")), qPrintable(fed)); // where it failed
        const QString logs = reply
                                 .json()[QStringLiteral("output")][0][QStringLiteral("outputs")][0]
                                        [QStringLiteral("logs")]
                                 .toString();
        QVERIFY2(logs.startsWith(QStringLiteral("step 1\nTraceback (most recent call last):\n")),
                 qPrintable(logs));
        QVERIFY2(logs.endsWith(QStringLiteral("ZeroDivisionError: division by zero\n")),
                 qPrintable(logs));
        QVERIFY(sandboxesGone());
    }

    void liveCodeOutputIsPublishedWithTheFlowId_data() {
        QTest::addColumn<bool>("chat");
        QTest::newRow("responses") << false;
        QTest::newRow("chat") << true;
    }

    void liveCodeOutputIsPublishedWithTheFlowId() {
        QFETCH(bool, chat);
        // A slow run: its output is published while it runs, before its code.executed.
        const QString code = QStringLiteral("import sys, time\n"
                                            "for i in range(3):\n"
                                            "    print(i, flush=True)\n"
                                            "    time.sleep(0.3)\n"
                                            "print('warn', file=sys.stderr)");
        upstream->enqueue(ScriptedUpstream::Response::json(
            chat ? chatToolCall(code, QStringLiteral("call_live"))
                 : responsesFunctionCall(code, QStringLiteral("call_live"))));
        upstream->enqueue(ScriptedUpstream::Response::json(
            chat ? chatText(QStringLiteral("done")) : responsesMessage(QStringLiteral("done"))));
        QList<InspectorEvent> events;
        QObject context;
        connect(bus.get(), &EventBus::eventPublished, &context,
                [&](const InspectorEvent &event) { events << event; });

        const auto reply =
            chat ? call("POST", "/v1/chat/completions", chatRequest(QStringLiteral("count")))
                 : call("POST", "/v1/responses", ciRequest(QStringLiteral("count")));
        QCOMPARE(reply.status, 200);
        QVERIFY(sandboxesGone());

        QString flowId;
        qsizetype started = -1;
        qsizetype executed = -1;
        QList<qsizetype> outputs;
        for (qsizetype i = 0; i < events.size(); ++i) {
            const InspectorEvent &e = events.at(i);
            if (e.kind == InspectorEvent::Kind::RequestStarted)
                flowId = e.requestId;
            else if (e.kind == InspectorEvent::Kind::CodeRunStarted)
                started = i;
            else if (e.kind == InspectorEvent::Kind::CodeRunOutput)
                outputs << i;
            else if (e.kind == InspectorEvent::Kind::CodeExecuted)
                executed = i;
        }
        QVERIFY(!flowId.isEmpty());
        QVERIFY(started >= 0);
        QVERIFY(executed > started);
        const InspectorEvent &start = events.at(started);
        QCOMPARE(start.requestId, flowId);
        QCOMPARE(start.iteration, 0);
        QCOMPARE(start.data.value(QStringLiteral("callId")).toString(),
                 QStringLiteral("call_live"));
        QCOMPARE(start.data.value(QStringLiteral("code")).toString(), code);
        const QString containerId = start.data.value(QStringLiteral("containerId")).toString();
        QVERIFY(containerId.startsWith(QStringLiteral("cntr_")));
        QCOMPARE(events.at(executed).data.value(QStringLiteral("containerId")).toString(),
                 containerId);

        // Chunks between the start and the result, with the flow id, adding up to the output.
        QVERIFY(!outputs.isEmpty());
        QString liveOut;
        QString liveErr;
        for (qsizetype i : std::as_const(outputs)) {
            const InspectorEvent &e = events.at(i);
            QVERIFY(i > started && i < executed);
            QCOMPARE(e.requestId, flowId);
            QCOMPARE(e.iteration, 0);
            QCOMPARE(e.data.value(QStringLiteral("callId")).toString(),
                     QStringLiteral("call_live"));
            const QString stream = e.data.value(QStringLiteral("stream")).toString();
            QVERIFY(stream == QLatin1String("stdout") || stream == QLatin1String("stderr"));
            (stream == QLatin1String("stdout") ? liveOut : liveErr) +=
                e.data.value(QStringLiteral("text")).toString();
        }
        const QJsonObject result = events.at(executed).data;
        QCOMPARE(result.value(QStringLiteral("stdout")).toString(), QStringLiteral("0\n1\n2\n"));
        QCOMPARE(result.value(QStringLiteral("stderr")).toString(), QStringLiteral("warn\n"));
        QCOMPARE(liveOut, result.value(QStringLiteral("stdout")).toString());
        QCOMPARE(liveErr, result.value(QStringLiteral("stderr")).toString());
    }

    // Each loop hears only its own plan's calls: two requests running code at the same time get
    // their own live output, whole, and none of the other's.
    void concurrentLoopsHearOnlyTheirOwnCodeOutput() {
        upstream->setResponder([](const ScriptedUpstream::Request &request) {
            const QJsonValue input = request.json()[QStringLiteral("input")];
            if (input.isArray())
                return ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("done")));
            return ScriptedUpstream::Response::json(responsesFunctionCall(
                QStringLiteral("import time\nfor i in range(3):\n"
                               "    print('%1', i, flush=True)\n    time.sleep(0.2)\n")
                    .arg(input.toString())));
        });
        QList<InspectorEvent> events;
        QObject context;
        connect(bus.get(), &EventBus::eventPublished, &context,
                [&](const InspectorEvent &event) { events << event; });
        const QList<QPair<QByteArray, QByteArray>> headers{{"authorization", kKeyA},
                                                           {"content-type", "application/json"}};
        RawHttpClient alpha(server->port());
        RawHttpClient beta(server->port());
        alpha.request("POST", "/v1/responses",
                      QJsonDocument(ciRequest(QStringLiteral("alpha"))).toJson(), headers);
        beta.request("POST", "/v1/responses",
                     QJsonDocument(ciRequest(QStringLiteral("beta"))).toJson(), headers);
        QVERIFY(QTest::qWaitFor(
            [&] { return alpha.hasCompleteResponse() && beta.hasCompleteResponse(); }, 60000));
        QCOMPARE(alpha.take().status, 200);
        QCOMPARE(beta.take().status, 200);
        QVERIFY(sandboxesGone());

        QHash<QString, QString> tagOfFlow; // from each flow's own request
        QHash<QString, QString> liveOutput;
        for (const InspectorEvent &e : std::as_const(events)) {
            if (e.kind == InspectorEvent::Kind::RequestStarted)
                tagOfFlow.insert(e.requestId, e.data[QStringLiteral("request")]
                                                  .toObject()[QStringLiteral("input")]
                                                  .toString());
            else if (e.kind == InspectorEvent::Kind::CodeRunOutput)
                liveOutput[e.requestId] += e.data.value(QStringLiteral("text")).toString();
        }
        QCOMPARE(tagOfFlow.size(), 2);
        for (auto it = tagOfFlow.cbegin(); it != tagOfFlow.cend(); ++it)
            QCOMPARE(liveOutput.value(it.key()),
                     QStringLiteral("%1 0\n%1 1\n%1 2\n").arg(it.value()));
    }

    void chatLoopAppendsToolMessage() {
        upstream->enqueue(
            ScriptedUpstream::Response::json(chatToolCall(QStringLiteral("print(2**10)"))));
        upstream->enqueue(ScriptedUpstream::Response::json(chatText(QStringLiteral("1024"))));
        const auto reply =
            call("POST", "/v1/chat/completions", chatRequest(QStringLiteral("2^10?")));
        QCOMPARE(reply.status, 200);
        QCOMPARE(reply
                     .json()[QStringLiteral("choices")][0][QStringLiteral("message")]
                            [QStringLiteral("content")]
                     .toString(),
                 QStringLiteral("1024"));
        const QJsonArray messages =
            upstream->requests()[1].json()[QStringLiteral("messages")].toArray();
        QCOMPARE(messages.size(), 3);
        QCOMPARE(messages[1][QStringLiteral("role")].toString(), QStringLiteral("assistant"));
        QCOMPARE(messages[2][QStringLiteral("role")].toString(), QStringLiteral("tool"));
        QCOMPARE(messages[2][QStringLiteral("tool_call_id")].toString(), QStringLiteral("call_c1"));
        QCOMPARE(messages[2][QStringLiteral("content")].toString(), QStringLiteral("1024\n"));
        QVERIFY(sandboxesGone());
    }

    void responsesStreamShowsCodeBeforeTheAnswer() {
        upstream->enqueue(
            ScriptedUpstream::Response::json(responsesFunctionCall(QStringLiteral("print('hi')"))));
        upstream->enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("Said hi."))));
        const auto reply = call("POST", "/v1/responses", ciRequest(QStringLiteral("say hi"), true));
        QCOMPARE(reply.status, 200);
        QVERIFY(reply.header("content-type").startsWith("text/event-stream"));
        const auto frames = parseSse(reply.body);
        QVERIFY(frames.size() > 10);
        QCOMPARE(frames.first().event, QStringLiteral("response.created"));
        QCOMPARE(frames.last().event, QStringLiteral("response.completed"));
        QCOMPARE(frames.last().json()[QStringLiteral("response")][QStringLiteral("id")],
                 frames.first().json()[QStringLiteral("response")][QStringLiteral("id")]);
        int interpreting = -1, firstDelta = -1;
        for (int i = 0; i < frames.size(); ++i) {
            if (frames[i].event == QLatin1String("response.code_interpreter_call.interpreting") &&
                interpreting < 0)
                interpreting = i;
            if (frames[i].event == QLatin1String("response.output_text.delta") && firstDelta < 0)
                firstDelta = i;
        }
        QVERIFY(interpreting > 0);
        QVERIFY(firstDelta > interpreting);
        QVERIFY(!upstream->requests()[0].json().contains(QStringLiteral("stream")) ||
                !upstream->requests()[0].json()[QStringLiteral("stream")].toBool());
    }

    void chatStreamReplaysWithOneUsageChunk() {
        upstream->enqueue(
            ScriptedUpstream::Response::json(chatToolCall(QStringLiteral("print(3)"))));
        upstream->enqueue(ScriptedUpstream::Response::json(chatText(QStringLiteral("three"), 28)));
        QJsonObject body = chatRequest(QStringLiteral("3?"));
        body.insert(QStringLiteral("stream"), true);
        body.insert(QStringLiteral("stream_options"),
                    QJsonObject{{QStringLiteral("include_usage"), true}});
        const auto reply = call("POST", "/v1/chat/completions", body);
        QCOMPARE(reply.status, 200);
        const auto frames = parseSse(reply.body);
        QCOMPARE(frames.last().data, QByteArray("[DONE]"));
        int usage = 0;
        for (const auto &f : frames)
            if (f.data != "[DONE]" && f.json()[QStringLiteral("usage")].isObject()) {
                ++usage;
                QCOMPARE(f.json()[QStringLiteral("usage")][QStringLiteral("total_tokens")].toInt(),
                         28);
            }
        QCOMPARE(usage, 1);
        for (const auto &request : upstream->requests()) {
            QVERIFY(!request.json().contains(QStringLiteral("stream_options")));
            QVERIFY(!request.json()[QStringLiteral("stream")].toBool());
        }
    }

    void ceilingEndsIncompleteWithoutInternalCall() {
        int n = 0;
        upstream->setResponder([&n](const ScriptedUpstream::Request &) {
            ++n;
            return ScriptedUpstream::Response::json(responsesFunctionCall(
                QStringLiteral("print(%1)").arg(n), QStringLiteral("call_%1").arg(n)));
        });
        const auto reply = call("POST", "/v1/responses", ciRequest(QStringLiteral("loop")));
        QCOMPARE(reply.status, 200);
        const QJsonObject response = reply.json();
        QCOMPARE(response[QStringLiteral("status")].toString(), QStringLiteral("incomplete"));
        QCOMPARE(
            response[QStringLiteral("incomplete_details")][QStringLiteral("reason")].toString(),
            QStringLiteral("max_agentic_loops"));
        QCOMPARE(outputTypes(response), QStringList(3, QStringLiteral("code_interpreter_call")));
        QVERIFY(!reply.body.contains("litellm_code_execution"));
        QCOMPARE(upstream->requestCount(), 4); // 3 rounds of code, then the ceiling
        // chronological: the first round's code comes first
        QCOMPARE(response[QStringLiteral("output")][0][QStringLiteral("code")].toString(),
                 QStringLiteral("print(1)"));
        QVERIFY(sandboxesGone());
    }

    void failedFollowUpReachesCallerAndCleansUp() {
        upstream->enqueue(
            ScriptedUpstream::Response::json(responsesFunctionCall(QStringLiteral("print(1)"))));
        upstream->enqueue(ScriptedUpstream::Response::json(
            500, QJsonDocument(
                     QJsonObject{
                         {QStringLiteral("error"),
                          QJsonObject{{QStringLiteral("message"),
                                       QStringLiteral("scripted follow-up failure")},
                                      {QStringLiteral("type"), QStringLiteral("server_error")}}}})
                     .toJson(QJsonDocument::Compact)));
        const auto reply = call("POST", "/v1/responses", ciRequest(QStringLiteral("x")));
        QCOMPARE(reply.status, 500);
        QCOMPARE(reply.json()[QStringLiteral("error")][QStringLiteral("message")].toString(),
                 QStringLiteral("scripted follow-up failure"));
        QVERIFY(sandboxesGone());
        QCOMPARE(call("GET", "/health").status, 200);
    }

    void aSandboxIsCreatedOnlyWhenTheModelCallsTheTool() {
        upstream->enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("No code needed."))));
        QSignalSpy events(bus.get(), &EventBus::eventPublished);
        const auto reply = call("POST", "/v1/responses", ciRequest(QStringLiteral("hello")));
        QCOMPARE(reply.status, 200);
        QCOMPARE(outputTypes(reply.json()), QStringList{QStringLiteral("message")});
        QCOMPARE(stack->localBackend()->sandboxIds().size(), 0);
        for (const auto &args : events)
            QVERIFY(args.at(0).value<InspectorEvent>().kind !=
                    InspectorEvent::Kind::SandboxCreated);
        // the client's hosted tool is echoed back, never the internal function
        QCOMPARE(reply.json()[QStringLiteral("tools")][0][QStringLiteral("type")].toString(),
                 QStringLiteral("code_interpreter"));
    }

    void clientHangingUpMidLoopStillCleansUp_data() {
        QTest::addColumn<bool>("duringCode");
        QTest::newRow("while the follow-up call is in flight") << false;
        QTest::newRow("while the code runs") << true;
    }
    void clientHangingUpMidLoopStillCleansUp() {
        QFETCH(bool, duringCode);
        const QString code =
            duringCode ? QStringLiteral("import time\ntime.sleep(2)") : QStringLiteral("print(1)");
        upstream->enqueue(ScriptedUpstream::Response::json(responsesFunctionCall(code)));
        auto slow = ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("late")));
        slow.headerDelayMs = 1500;
        upstream->enqueue(slow);
        QSignalSpy events(bus.get(), &EventBus::eventPublished);
        RawHttpClient client(server->port());
        client.request(
            "POST", "/v1/responses",
            QJsonDocument(ciRequest(QStringLiteral("x"), true)).toJson(QJsonDocument::Compact),
            {{"authorization", kKeyA}, {"content-type", "application/json"}});
        if (duringCode) // announced before it runs: the code is running now
            QTRY_VERIFY_WITH_TIMEOUT(
                client.received().contains("response.code_interpreter_call.interpreting"), 30000);
        else // the code ran and the follow-up call is in flight
            QTRY_COMPARE_WITH_TIMEOUT(upstream->requestCount(), 2, 30000);
        QCOMPARE(stack->registry()->size(), 1);
        client.close();
        QVERIFY(sandboxesGone());
        // a client that left gets no further model calls made on its behalf
        QCOMPARE(upstream->requestCount(), duringCode ? 1 : 2);
        auto failedWith499 = [&events] {
            for (const auto &args : events) {
                const auto e = args.at(0).value<InspectorEvent>();
                if (e.kind == InspectorEvent::Kind::RequestFailed)
                    return e.data.value(QStringLiteral("status")).toInt() == 499;
            }
            return false;
        };
        QVERIFY(QTest::qWaitFor(failedWith499, 20000));
    }

    // Hang-up means stop: the spinning code is interrupted (not left to its timeout), its run
    // is published with the output so far before the flow fails with client_closed; a one-shot
    // sandbox goes, a session's survives with its variables.
    void clientHangUpStopsTheRunningCode_data() {
        QTest::addColumn<bool>("chat");
        QTest::addColumn<bool>("stream");
        QTest::addColumn<bool>("session");
        QTest::newRow("responses json") << false << false << false;
        QTest::newRow("responses stream") << false << true << false;
        QTest::newRow("chat json") << true << false << false;
        QTest::newRow("chat stream") << true << true << false;
        QTest::newRow("responses session") << false << false << true;
        QTest::newRow("chat stream session") << true << true << true;
    }
    void clientHangUpStopsTheRunningCode() {
        QFETCH(bool, chat);
        QFETCH(bool, stream);
        QFETCH(bool, session);
        const QString spin = QStringLiteral("print('spinning', flush=True)\nwhile True:\n    pass");
        upstream->setResponder([chat](const ScriptedUpstream::Request &request) {
            const QJsonObject body = request.json();
            // The last user text is the code to run; a tool result gets a plain answer.
            const QJsonArray turns =
                body.value(chat ? QStringLiteral("messages") : QStringLiteral("input")).toArray();
            const QJsonObject last = turns.isEmpty() ? QJsonObject() : turns.last().toObject();
            const bool answered =
                last.value(QStringLiteral("role")).toString() == QLatin1String("tool") ||
                last.value(QStringLiteral("type")).toString() ==
                    QLatin1String("function_call_output");
            if (answered) // the answer quotes the tool result
                return ScriptedUpstream::Response::json(
                    chat ? chatText(last.value(QStringLiteral("content")).toString())
                         : responsesMessage(last.value(QStringLiteral("output")).toString()));
            const QString code = chat ? last.value(QStringLiteral("content")).toString()
                                      : body.value(QStringLiteral("input")).toString();
            return ScriptedUpstream::Response::json(chat ? chatToolCall(code)
                                                         : responsesFunctionCall(code));
        });
        const auto requestFor = [&](const QString &code) {
            QJsonObject body = chat ? chatRequest(code) : ciRequest(code);
            if (stream)
                body.insert(QStringLiteral("stream"), true);
            if (session)
                body.insert(QStringLiteral("metadata"),
                            QJsonObject{{QStringLiteral("session_id"), QStringLiteral("s-hang")}});
            return body;
        };
        const QByteArray path = chat ? "/v1/chat/completions" : "/v1/responses";
        if (session)
            QCOMPARE(call("POST", path, requestFor(QStringLiteral("kept = 41"))).status, 200);

        QList<InspectorEvent> events;
        QObject context;
        connect(bus.get(), &EventBus::eventPublished, &context,
                [&](const InspectorEvent &event) { events << event; });
        const auto find = [&events](InspectorEvent::Kind kind) -> std::optional<InspectorEvent> {
            for (const InspectorEvent &e : std::as_const(events))
                if (e.kind == kind)
                    return e;
            return std::nullopt;
        };
        RawHttpClient client(server->port());
        client.request("POST", path, QJsonDocument(requestFor(spin)).toJson(QJsonDocument::Compact),
                       {{"authorization", kKeyA}, {"content-type", "application/json"}});
        QTRY_VERIFY_WITH_TIMEOUT(find(InspectorEvent::Kind::CodeRunOutput), 30000);
        const qint64 pid =
            stack->localBackend()->processId(stack->localBackend()->sandboxIds().value(0));
        client.close();

        // The default run timeout is far away: only the cancellation ends the run this soon.
        QTRY_VERIFY_WITH_TIMEOUT(find(InspectorEvent::Kind::RequestFailed), 15000);
        const auto executed = find(InspectorEvent::Kind::CodeExecuted);
        QVERIFY2(executed, "the run that was hanging is published");
        QCOMPARE(executed->data.value(QStringLiteral("stdout")).toString(),
                 QStringLiteral("spinning\n"));
        QCOMPARE(executed->data.value(QStringLiteral("error"))
                     .toObject()
                     .value(QStringLiteral("name"))
                     .toString(),
                 QStringLiteral("KeyboardInterrupt"));
        QVERIFY(executed->sequence < find(InspectorEvent::Kind::RequestFailed)->sequence);
        const QJsonObject failed = find(InspectorEvent::Kind::RequestFailed)->data;
        QCOMPARE(failed.value(QStringLiteral("status")).toInt(), 499);
        QCOMPARE(failed.value(QStringLiteral("incompleteReason")).toString(),
                 QStringLiteral("client_closed"));
        QCOMPARE(upstream->requestCount(), session ? 3 : 1); // no follow-up for a gone client
        if (!session) {
            QVERIFY(sandboxesGone());
            return;
        }
        QCOMPARE(stack->registry()->size(), 1);
        QCOMPARE(stack->localBackend()->processId(stack->localBackend()->sandboxIds().value(0)),
                 pid); // the same interpreter, with its state
        const auto after = call("POST", path, requestFor(QStringLiteral("print(kept + 1)")));
        QCOMPARE(after.status, 200);
        QVERIFY2(after.body.contains("42"), after.body.constData());
    }

    // sandbox.max_live reached: a streamed request waits for the slot with ": waiting for a
    // sandbox" comments and SandboxWaiting; one that hangs up while waiting leaves the queue
    // and nothing is created for it; the other is served once the slot frees.
    void waitersAreKeptAliveAndCanLeave() {
        stack->registry()->setMaxLive(1);
        upstream->setResponder([](const ScriptedUpstream::Request &request) {
            const QJsonValue input = request.json()[QStringLiteral("input")];
            if (input.isArray())
                return ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("done")));
            return ScriptedUpstream::Response::json(responsesFunctionCall(input.toString()));
        });
        QList<InspectorEvent> events;
        QObject context;
        connect(bus.get(), &EventBus::eventPublished, &context,
                [&](const InspectorEvent &event) { events << event; });
        const auto count = [&events](InspectorEvent::Kind kind) {
            return std::count_if(events.cbegin(), events.cend(),
                                 [kind](const InspectorEvent &e) { return e.kind == kind; });
        };
        const auto start = [this](const QString &code) {
            auto client = std::make_unique<RawHttpClient>(server->port());
            client->request("POST", "/v1/responses",
                            QJsonDocument(ciRequest(code, true)).toJson(QJsonDocument::Compact),
                            {{"authorization", kKeyA}, {"content-type", "application/json"}});
            return client;
        };
        auto holder = start(QStringLiteral("print('holding', flush=True)\nwhile True:\n    pass"));
        QTRY_VERIFY_WITH_TIMEOUT(count(InspectorEvent::Kind::CodeRunOutput) > 0, 30000);
        auto leaver = start(QStringLiteral("print('never')"));
        QTRY_VERIFY_WITH_TIMEOUT(leaver->received().contains(": waiting for a sandbox"), 30000);
        auto waiter = start(QStringLiteral("print('served')"));
        QTRY_VERIFY_WITH_TIMEOUT(waiter->received().contains(": waiting for a sandbox"), 30000);
        QCOMPARE(stack->registry()->waitingCount(), 2);
        QCOMPARE(count(InspectorEvent::Kind::SandboxWaiting), 2);

        leaver->close();
        QTRY_COMPARE_WITH_TIMEOUT(stack->registry()->waitingCount(), 1, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(count(InspectorEvent::Kind::SandboxWaitEnded), 1, 10000);
        holder->close(); // its one-shot sandbox is deleted: the slot goes to the waiter
        QTRY_VERIFY_WITH_TIMEOUT(waiter->hasCompleteResponse(), 30000);
        const QByteArray body = waiter->received();
        QVERIFY2(body.contains("served"), body.constData());
        QVERIFY(body.contains("response.completed"));
        QCOMPARE(count(InspectorEvent::Kind::SandboxWaitEnded), 2);
        // Sandboxes: the holder's and the waiter's, none for the one that left.
        QCOMPARE(count(InspectorEvent::Kind::SandboxCreated), 2);
        QVERIFY(sandboxesGone());
    }

    void requestsWithoutTheToolPassThroughUntouched() {
        upstream->enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("plain"))));
        QJsonObject body{{QStringLiteral("model"), QStringLiteral("gpt-5")},
                         {QStringLiteral("input"), QStringLiteral("hello")},
                         {QStringLiteral("temperature"), 0.5}};
        const auto reply = call("POST", "/v1/responses", body);
        QCOMPARE(reply.status, 200);
        QCOMPARE(upstream->requests()[0].json(), body);
        QCOMPARE(stack->registry()->size(), 0);
        QCOMPARE(stack->localBackend()->sandboxIds().size(), 0);
    }

    void sessionsKeepStateAndStayWithTheirKey() {
        upstream->setResponder([](const ScriptedUpstream::Request &request) {
            const QJsonArray input = request.json()[QStringLiteral("input")].toArray();
            if (!input.isEmpty() && input.last()[QStringLiteral("type")].toString() ==
                                        QLatin1String("function_call_output"))
                return ScriptedUpstream::Response::json(
                    responsesMessage(input.last()[QStringLiteral("output")].toString()));
            const QString code =
                request.json()[QStringLiteral("input")].toString(); // first call: a string
            return ScriptedUpstream::Response::json(responsesFunctionCall(code));
        });
        auto withSession = [](const QString &code) {
            QJsonObject body = ciRequest(code);
            body.insert(QStringLiteral("metadata"),
                        QJsonObject{{QStringLiteral("session_id"), QStringLiteral("s-1")}});
            return body;
        };
        auto logsOf = [](const RawHttpClient::Response &r) {
            return r
                .json()[QStringLiteral("output")][0][QStringLiteral("outputs")][0]
                       [QStringLiteral("logs")]
                .toString();
        };
        const auto first =
            call("POST", "/v1/responses", withSession(QStringLiteral("v = 41\nprint('set')")));
        QCOMPARE(first.status, 200);
        const auto second =
            call("POST", "/v1/responses", withSession(QStringLiteral("print(v + 1)")));
        QVERIFY2(logsOf(second) == QStringLiteral("42\n"), second.body.constData());
        const QString containerId =
            first.json()[QStringLiteral("output")][0][QStringLiteral("container_id")].toString();
        QCOMPARE(
            second.json()[QStringLiteral("output")][0][QStringLiteral("container_id")].toString(),
            containerId);

        const auto other =
            call("POST", "/v1/responses", withSession(QStringLiteral("print(v + 1)")), kKeyB);
        QVERIFY(logsOf(other).contains(QStringLiteral("NameError")) ||
                logsOf(other).contains(QStringLiteral("not defined")));
        QCOMPARE(stack->registry()->size(), 2); // one session sandbox per key
        const auto entry = stack->registry()->entryByContainerId(containerId);
        QVERIFY(entry);
        QCOMPARE(entry->sessionId, QStringLiteral("s-1")); // shown in the Sandboxes panel

        const auto listA = call("GET", "/v1/containers");
        QCOMPARE(listA.status, 200);
        QCOMPARE(listA.json()[QStringLiteral("data")].toArray().size(), 1);
        QCOMPARE(listA.json()[QStringLiteral("data")][0][QStringLiteral("id")].toString(),
                 containerId);
        QCOMPARE(call("GET", "/v1/containers/" + containerId.toUtf8(), {}, kKeyB).status, 404);
        QCOMPARE(call("DELETE", "/v1/containers/" + containerId.toUtf8(), {}, kKeyB).status, 404);
        const auto deleted = call("DELETE", "/v1/containers/" + containerId.toUtf8());
        QCOMPARE(deleted.status, 200);
        QCOMPARE(deleted.json()[QStringLiteral("deleted")].toBool(), true);
        QCOMPARE(stack->registry()->size(), 1);
        const auto fresh =
            call("POST", "/v1/responses", withSession(QStringLiteral("print(v + 1)")));
        QVERIFY(logsOf(fresh).contains(QStringLiteral("NameError")) ||
                logsOf(fresh).contains(QStringLiteral("not defined")));
    }

    void concurrentStreamsInOneSessionKeepTheirOwnCalls() {
        upstream->setResponder([](const ScriptedUpstream::Request &request) {
            const QJsonValue input = request.json()[QStringLiteral("input")];
            if (input.isArray())
                return ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("done")));
            return ScriptedUpstream::Response::json(
                responsesFunctionCall(QStringLiteral("print('%1')").arg(input.toString())));
        });
        auto body = [](const QString &tag) {
            QJsonObject b = ciRequest(tag, true);
            b.insert(QStringLiteral("metadata"),
                     QJsonObject{{QStringLiteral("session_id"), QStringLiteral("shared")}});
            return QJsonDocument(b).toJson(QJsonDocument::Compact);
        };
        const QList<QPair<QByteArray, QByteArray>> headers{{"authorization", kKeyA},
                                                           {"content-type", "application/json"}};
        RawHttpClient first(server->port());
        RawHttpClient second(server->port());
        first.request("POST", "/v1/responses", body(QStringLiteral("alpha")), headers);
        second.request("POST", "/v1/responses", body(QStringLiteral("beta")), headers);
        QVERIFY(QTest::qWaitFor(
            [&] { return first.hasCompleteResponse() && second.hasCompleteResponse(); }, 60000));
        for (auto [client, tag] : {std::pair{&first, "alpha"}, std::pair{&second, "beta"}}) {
            const auto frames = parseSse(client->take().body);
            QCOMPARE(frames.last().event, QStringLiteral("response.completed"));
            int added = 0;
            for (const auto &f : frames) {
                if (f.event == QLatin1String("response.code_interpreter_call_code.delta")) {
                    ++added;
                    QVERIFY(
                        f.json()[QStringLiteral("delta")].toString().contains(QLatin1String(tag)));
                }
            }
            QCOMPARE(added, 1); // only its own call, although both ran in one session sandbox
        }
    }

    void foreignContainerIdIsNotFound() {
        QJsonObject body = ciRequest(QStringLiteral("x"));
        body.insert(QStringLiteral("tools"),
                    QJsonArray{QJsonObject{
                        {QStringLiteral("type"), QStringLiteral("code_interpreter")},
                        {QStringLiteral("container"), QStringLiteral("cntr_not_yours")}}});
        const auto reply = call("POST", "/v1/responses", body);
        QCOMPARE(reply.status, 404);
        QCOMPARE(upstream->requestCount(), 0);
    }

    void clientForgedIdentityIsIgnored() {
        upstream->enqueue(ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("ok"))));
        QJsonObject body = ciRequest(QStringLiteral("x"));
        body.insert(QStringLiteral("user_api_key_hash"), QStringLiteral("victim-hash"));
        body.insert(QStringLiteral("metadata"),
                    QJsonObject{{QStringLiteral("session_id"), QStringLiteral("s")}});
        QCOMPARE(call("POST", "/v1/responses", body).status, 200);
        QVERIFY(!upstream->requests()[0].body.contains("victim-hash"));
    }
};

QTEST_GUILESS_MAIN(TestAgenticLoop)
#include "tst_agenticloop.moc"
