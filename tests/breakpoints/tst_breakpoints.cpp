// Breakpoints end to end inside one process: a real proxy on loopback with the production
// InterceptionStack (real bubblewrap Python sandboxes), a scripted upstream model, and the
// stack's PauseBroker resolved the way the window and the control API resolve it.
#include "inspect/eventbus.h"
#include "loop/loopfixtures.h"
#include "loop/pausebroker.h"
#include "loop/sseparser.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "sandbox/local/localpythonbackend.h"
#include "sandbox/sandboxregistry.h"

#include <QDateTime>
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

const QByteArray kKey = "Bearer sk-breakpoint-test-0001";
const QString kCodePrefix = QStringLiteral("code:");

// The model: writes the code named in the user's text ("code:<python>"), then answers with
// what the tool gave back ("got: <output>"). Content-based, so concurrent flows stay apart.
ScriptedUpstream::Response model(const ScriptedUpstream::Request &request) {
    const QJsonObject body = request.json();
    if (body.contains(QStringLiteral("messages"))) {
        const QJsonArray messages = body.value(QStringLiteral("messages")).toArray();
        const QJsonObject last = messages.last().toObject();
        if (last.value(QStringLiteral("role")).toString() == QLatin1String("tool"))
            return ScriptedUpstream::Response::json(chatText(
                QStringLiteral("got: ") + last.value(QStringLiteral("content")).toString()));
        return ScriptedUpstream::Response::json(
            chatToolCall(last.value(QStringLiteral("content")).toString().mid(kCodePrefix.size())));
    }
    const QJsonValue input = body.value(QStringLiteral("input"));
    if (input.isArray()) {
        const QJsonObject last = input.toArray().last().toObject();
        if (last.value(QStringLiteral("type")).toString() == QLatin1String("function_call_output"))
            return ScriptedUpstream::Response::json(responsesMessage(
                QStringLiteral("got: ") + last.value(QStringLiteral("output")).toString()));
        return ScriptedUpstream::Response::json(responsesFunctionCall(
            last.value(QStringLiteral("content")).toString().mid(kCodePrefix.size())));
    }
    return ScriptedUpstream::Response::json(
        responsesFunctionCall(input.toString().mid(kCodePrefix.size())));
}

QJsonObject requestFor(bool chat, const QString &code, bool stream, const QString &sessionId = {}) {
    QJsonObject body{{QStringLiteral("model"), QStringLiteral("gpt-5")}};
    if (chat) {
        body.insert(
            QStringLiteral("messages"),
            QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                   {QStringLiteral("content"), QString(kCodePrefix + code)}}});
        body.insert(
            QStringLiteral("tools"),
            QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")}}});
    } else {
        body.insert(QStringLiteral("input"), QString(kCodePrefix + code));
        body.insert(QStringLiteral("tools"),
                    QJsonArray{QJsonObject{
                        {QStringLiteral("type"), QStringLiteral("code_interpreter")},
                        {QStringLiteral("container"),
                         QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}});
    }
    if (stream)
        body.insert(QStringLiteral("stream"), true);
    if (!sessionId.isEmpty())
        body.insert(QStringLiteral("metadata"),
                    QJsonObject{{QStringLiteral("session_id"), sessionId}});
    return body;
}

// What the client finally got, whatever the transport: the Responses object (JSON, or the
// response of response.completed), the chat text, or the error code.
struct ClientView {
    int status = 0;
    QJsonObject response;
    QString text;
    QString errorCode;
    QList<SseFrame> frames;
};

ClientView viewOf(const RawHttpClient::Response &reply, bool chat, bool stream) {
    ClientView view;
    view.status = reply.status;
    if (!stream) {
        const QJsonObject json = reply.json();
        view.errorCode =
            json.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString();
        view.response = json;
        view.text = chat ? json[QStringLiteral("choices")][0][QStringLiteral("message")]
                               [QStringLiteral("content")]
                                   .toString()
                         : QString();
    } else {
        view.frames = parseSse(reply.body);
        for (const SseFrame &frame : std::as_const(view.frames)) {
            const QJsonObject json = frame.json();
            if (json.contains(QStringLiteral("error"))) {
                const QJsonObject error = json.value(QStringLiteral("error")).toObject();
                view.errorCode = error.value(QStringLiteral("code")).toString();
            } else if (frame.event == QLatin1String("error")) {
                view.errorCode = json.value(QStringLiteral("code")).toString();
            }
            if (frame.event == QLatin1String("response.completed"))
                view.response = json.value(QStringLiteral("response")).toObject();
            if (chat)
                view.text += json[QStringLiteral("choices")][0][QStringLiteral("delta")]
                                 [QStringLiteral("content")]
                                     .toString();
        }
    }
    if (!chat) {
        for (const QJsonValue &item : view.response.value(QStringLiteral("output")).toArray()) {
            const QJsonObject o = item.toObject();
            if (o.value(QStringLiteral("type")).toString() == QLatin1String("message"))
                view.text = o[QStringLiteral("content")][0][QStringLiteral("text")].toString();
        }
    }
    return view;
}

QJsonObject firstCodeCall(const QJsonObject &response) {
    for (const QJsonValue &item : response.value(QStringLiteral("output")).toArray())
        if (item.toObject().value(QStringLiteral("type")).toString() ==
            QLatin1String("code_interpreter_call"))
            return item.toObject();
    return {};
}

} // namespace

class TestBreakpoints : public QObject {
    Q_OBJECT

    std::unique_ptr<ScriptedUpstream> upstream;
    std::unique_ptr<EventBus> bus;
    std::unique_ptr<ProxyServer> server;
    std::unique_ptr<InterceptionStack> stack;
    std::unique_ptr<QSignalSpy> events;

    PauseBroker *broker() const { return stack->pauseBroker(); }

    std::unique_ptr<RawHttpClient> start(bool chat, const QJsonObject &body) {
        auto client = std::make_unique<RawHttpClient>(server->port());
        client->request("POST", chat ? "/v1/chat/completions" : "/v1/responses",
                        QJsonDocument(body).toJson(QJsonDocument::Compact),
                        {{"authorization", kKey}, {"content-type", "application/json"}});
        return client;
    }

    RawHttpClient::Response finish(RawHttpClient &client) {
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 60000))
            return {};
        return client.take();
    }

    // The one pending pause (waits for it).
    QJsonObject awaitPause(int count = 1) {
        if (!QTest::qWaitFor([&] { return broker()->pendingCount() >= count; }, 60000))
            return {};
        return broker()->pending().at(count - 1).toObject();
    }

    void setBreakpoints(const QJsonObject &json) {
        QString error;
        const auto settings = BreakpointSettings::fromJson(json, &error);
        QVERIFY2(settings, qPrintable(error));
        broker()->setSettings(*settings);
    }

    QList<QJsonObject> eventsOf(InspectorEvent::Kind kind) const {
        QList<QJsonObject> out;
        for (const auto &args : *events) {
            const auto event = args.at(0).value<InspectorEvent>();
            if (event.kind == kind)
                out << event.data;
        }
        return out;
    }

    bool sandboxesGone() {
        return QTest::qWaitFor([this] { return stack->registry()->size() == 0; }, 20000);
    }

private slots:
    void init() {
        upstream = std::make_unique<ScriptedUpstream>();
        upstream->setResponder(model);
        QVERIFY(upstream->listen());
        bus = std::make_unique<EventBus>();
        events = std::make_unique<QSignalSpy>(bus.get(), &EventBus::eventPublished);
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
        broker()->setHeartbeatIntervalMs(100);
    }

    void cleanup() {
        if (stack) {
            auto done = stack->shutdown();
            QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 20000));
            QCOMPARE(stack->localBackend()->sandboxIds().size(), 0);
        }
        events.reset();
        stack.reset();
        server.reset();
        upstream.reset();
        bus.reset();
    }

    void offByDefault() {
        QCOMPARE(broker()->settings().toJson(),
                 QJsonDocument::fromJson(
                     "{\"code\":false,\"upstream_request\":false, "
                     "\"upstream_response\":false,\"match\":{\"model\":null,\"session_id\":null, "
                     "\"code_regex\":null},\"timeout_s\":600,\"on_timeout\":\"deny\"}")
                     .object());
        auto client = start(false, requestFor(false, QStringLiteral("print(6*7)"), false));
        const ClientView view = viewOf(finish(*client), false, false);
        QCOMPARE(view.status, 200);
        QCOMPARE(view.text, QStringLiteral("got: 42\n"));
        QVERIFY(eventsOf(InspectorEvent::Kind::Paused).isEmpty());
    }

    void settingsValidation_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<bool>("valid");
        QTest::newRow("empty") << QByteArray("{}") << true;
        QTest::newRow("all")
            << QByteArray("{\"code\":true,\"upstream_request\":true, "
                          "\"upstream_response\":true,\"match\":{\"model\":\"m\",\"session_id\":"
                          "\"s\",\"code_regex\":\"a+\"}, \"timeout_s\":5,\"on_timeout\":\"abort\"}")
            << true;
        QTest::newRow("code not bool") << QByteArray("{\"code\":\"yes\"}") << false;
        QTest::newRow("bad regex") << QByteArray("{\"match\":{\"code_regex\":\"(\"}}") << false;
        QTest::newRow("bad timeout") << QByteArray("{\"timeout_s\":-1}") << false;
        QTest::newRow("bad on_timeout") << QByteArray("{\"on_timeout\":\"later\"}") << false;
        QTest::newRow("match not object") << QByteArray("{\"match\":[]}") << false;
    }

    void settingsValidation() {
        QFETCH(QByteArray, json);
        QFETCH(bool, valid);
        QString error;
        const auto settings =
            BreakpointSettings::fromJson(QJsonDocument::fromJson(json).object(), &error);
        QCOMPARE(bool(settings), valid);
        QCOMPARE(error.isEmpty(), valid);
        if (settings) { // what PUT returns is what GET then shows, again accepted
            const auto again = BreakpointSettings::fromJson(settings->toJson(), &error);
            QVERIFY(again);
            QCOMPARE(again->toJson(), settings->toJson());
        }
    }

    // Every action on a code pause, both APIs, streaming and not.
    void codePause_data() {
        QTest::addColumn<bool>("chat");
        QTest::addColumn<bool>("stream");
        QTest::addColumn<QString>("action");
        for (const bool chat : {false, true})
            for (const bool stream : {false, true})
                for (const char *action : {"continue", "edit", "deny", "abort"})
                    QTest::addRow("%s/%s/%s", chat ? "chat" : "responses",
                                  stream ? "stream" : "json", action)
                        << chat << stream << QString::fromLatin1(action);
    }

    void codePause() {
        QFETCH(bool, chat);
        QFETCH(bool, stream);
        QFETCH(QString, action);
        setBreakpoints({{QStringLiteral("code"), true}});
        auto client = start(chat, requestFor(chat, QStringLiteral("print(6*7)"), stream));
        const QJsonObject pause = awaitPause();
        QCOMPARE(pause.value(QStringLiteral("kind")).toString(), QStringLiteral("code"));
        QCOMPARE(pause.value(QStringLiteral("code")).toString(), QStringLiteral("print(6*7)"));
        QVERIFY(pause.value(QStringLiteral("id")).toString().startsWith(QStringLiteral("pause_")));
        QVERIFY(
            pause.value(QStringLiteral("flow_id")).toString().startsWith(QStringLiteral("req_")));
        QCOMPARE(pause.value(QStringLiteral("call_id")).toString(),
                 chat ? QStringLiteral("call_c1") : QStringLiteral("call_1"));
        QVERIFY(pause.value(QStringLiteral("paused_at")).toInteger() > 0);
        QCOMPARE(eventsOf(InspectorEvent::Kind::Paused).size(), 1);
        QCOMPARE(eventsOf(InspectorEvent::Kind::Paused).first(), pause);
        if (stream) {
            // Before the pause: the stream is open (Responses: created and the call in
            // progress); then heartbeats keep it alive.
            QVERIFY(QTest::qWaitFor([&] { return client->received().count(": paused\n\n") >= 2; },
                                    20000));
            if (!chat) {
                QVERIFY(client->received().contains("event: response.created"));
                QVERIFY(client->received().contains("response.code_interpreter_call.in_progress"));
            }
        }

        QJsonObject decision{{QStringLiteral("action"), action}};
        if (action == QLatin1String("edit")) {
            decision.insert(QStringLiteral("action"), QStringLiteral("continue"));
            decision.insert(QStringLiteral("code"), QStringLiteral("print(7*7)"));
        }
        if (action == QLatin1String("deny"))
            decision.insert(QStringLiteral("message"), QStringLiteral("Not on my machine."));
        const auto resolved =
            broker()->resolve(pause.value(QStringLiteral("id")).toString(), decision);
        QCOMPARE(int(resolved.status), int(PauseBroker::ResolveStatus::Resolved));
        const auto again =
            broker()->resolve(pause.value(QStringLiteral("id")).toString(), decision);
        QCOMPARE(int(again.status), int(PauseBroker::ResolveStatus::AlreadyResolved));

        const ClientView view = viewOf(finish(*client), chat, stream);
        const QList<QJsonObject> runs = eventsOf(InspectorEvent::Kind::CodeExecuted);
        QCOMPARE(runs.size(), 1);
        const QJsonObject run = runs.first();
        const QJsonObject item = firstCodeCall(view.response);
        if (action == QLatin1String("abort")) {
            if (stream) {
                QCOMPARE(view.status, 200); // the stream had begun: an error event ends it
            } else {
                QCOMPARE(view.status, 409);
            }
            QCOMPARE(view.errorCode, QStringLiteral("aborted_by_user"));
            QCOMPARE(upstream->requestCount(), 1);
            QCOMPARE(run.value(QStringLiteral("decision")).toString(), QStringLiteral("aborted"));
            QCOMPARE(run.value(QStringLiteral("executed")).toBool(), false);
            QVERIFY(sandboxesGone()); // cleanup as on any failure
            const QList<QJsonObject> failed = eventsOf(InspectorEvent::Kind::RequestFailed);
            QCOMPARE(failed.size(), 1);
            QCOMPARE(failed.first().value(QStringLiteral("flowStatus")).toInt(), 499);
            return;
        }
        QCOMPARE(view.status, 200);
        QCOMPARE(upstream->requestCount(), 2);
        if (action == QLatin1String("continue")) {
            QCOMPARE(view.text, QStringLiteral("got: 42\n"));
            QCOMPARE(run.value(QStringLiteral("decision")).toString(), QStringLiteral("continued"));
            QVERIFY(!run.contains(QStringLiteral("edited_from")));
            if (!chat) {
                QCOMPARE(item.value(QStringLiteral("code")).toString(),
                         QStringLiteral("print(6*7)"));
                QCOMPARE(item.value(QStringLiteral("status")).toString(),
                         QStringLiteral("completed"));
            }
        } else if (action == QLatin1String("edit")) {
            // The edited code ran: its output reached the model, and the client's item and
            // the model's follow-up carry the code that really ran.
            QCOMPARE(view.text, QStringLiteral("got: 49\n"));
            QCOMPARE(run.value(QStringLiteral("decision")).toString(), QStringLiteral("edited"));
            QCOMPARE(run.value(QStringLiteral("code")).toString(), QStringLiteral("print(7*7)"));
            QCOMPARE(run.value(QStringLiteral("edited_from")).toString(),
                     QStringLiteral("print(6*7)"));
            QVERIFY(upstream->requests()[1].body.contains("print(7*7)"));
            if (!chat) {
                QCOMPARE(item.value(QStringLiteral("code")).toString(),
                         QStringLiteral("print(7*7)"));
                QCOMPARE(item[QStringLiteral("outputs")][0][QStringLiteral("logs")].toString(),
                         QStringLiteral("49\n"));
            }
        } else { // deny: the model gets the message as the tool output, the loop goes on
            QCOMPARE(view.text, QStringLiteral("got: Not on my machine."));
            QCOMPARE(run.value(QStringLiteral("decision")).toString(), QStringLiteral("denied"));
            QCOMPARE(run.value(QStringLiteral("executed")).toBool(), false);
            QCOMPARE(run.value(QStringLiteral("output")).toString(),
                     QStringLiteral("Not on my machine."));
            if (!chat) {
                QCOMPARE(item.value(QStringLiteral("code")).toString(),
                         QStringLiteral("print(6*7)"));
                QCOMPARE(item.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
                QCOMPARE(item[QStringLiteral("outputs")][0][QStringLiteral("logs")].toString(),
                         QStringLiteral("Not on my machine."));
            }
        }
        if (!chat && stream) { // the streamed item agrees with the final response
            QJsonObject done;
            for (const SseFrame &frame : view.frames)
                if (frame.event == QLatin1String("response.output_item.done") &&
                    frame.json()[QStringLiteral("item")][QStringLiteral("type")].toString() ==
                        QLatin1String("code_interpreter_call"))
                    done = frame.json()[QStringLiteral("item")].toObject();
            QCOMPARE(done, item);
        }
        QCOMPARE(eventsOf(InspectorEvent::Kind::Resumed).size(), 1);
        QVERIFY(sandboxesGone());
    }

    // Upstream pauses: continue, edit the body, abort; both APIs, streaming and not.
    void upstreamPause_data() {
        QTest::addColumn<bool>("chat");
        QTest::addColumn<bool>("stream");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("action");
        for (const bool chat : {false, true})
            for (const bool stream : {false, true})
                for (const char *kind : {"upstream_request", "upstream_response"})
                    for (const char *action : {"continue", "edit", "abort"})
                        QTest::addRow("%s/%s/%s/%s", chat ? "chat" : "responses",
                                      stream ? "stream" : "json", kind, action)
                            << chat << stream << QString::fromLatin1(kind)
                            << QString::fromLatin1(action);
    }

    void upstreamPause() {
        QFETCH(bool, chat);
        QFETCH(bool, stream);
        QFETCH(QString, kind);
        QFETCH(QString, action);
        // Only the first model call: the match narrows the breakpoint to the code print(6*7).
        setBreakpoints(
            {{kind, true},
             {QStringLiteral("match"),
              QJsonObject{{QStringLiteral("code_regex"),
                           kind == QLatin1String("upstream_request")
                               ? QStringLiteral("^(?!.*(function_call_output|\"role\":\"tool\"))")
                               : QStringLiteral("6\\*7")}}}});
        auto client = start(chat, requestFor(chat, QStringLiteral("print(6*7)"), stream));
        const QJsonObject pause = awaitPause();
        QCOMPARE(pause.value(QStringLiteral("kind")).toString(), kind);
        QJsonObject body = pause.value(QStringLiteral("body")).toObject();
        QVERIFY(!body.isEmpty());
        if (kind == QLatin1String("upstream_response"))
            QCOMPARE(pause.value(QStringLiteral("code")).toString(), QStringLiteral("print(6*7)"));
        if (stream)
            QVERIFY(
                QTest::qWaitFor([&] { return client->received().contains(": paused"); }, 20000));

        QJsonObject decision{{QStringLiteral("action"), action}};
        if (action == QLatin1String("edit")) {
            decision.insert(QStringLiteral("action"), QStringLiteral("continue"));
            // Edit the model's code in the body (request: the user's text; response: the
            // function call's arguments): 8*8 then runs instead.
            body = QJsonDocument::fromJson(
                       QJsonDocument(body).toJson(QJsonDocument::Compact).replace("6*7", "8*8"))
                       .object();
            decision.insert(QStringLiteral("body"), body);
        }
        const QString id = pause.value(QStringLiteral("id")).toString();
        // deny is for code only
        QCOMPARE(
            int(broker()->resolve(id, {{QStringLiteral("action"), QStringLiteral("deny")}}).status),
            int(PauseBroker::ResolveStatus::Invalid));
        QCOMPARE(int(broker()->resolve(id, decision).status),
                 int(PauseBroker::ResolveStatus::Resolved));
        const ClientView view = viewOf(finish(*client), chat, stream);
        if (action == QLatin1String("abort")) {
            QCOMPARE(view.status, stream ? 200 : 409);
            QCOMPARE(view.errorCode, QStringLiteral("aborted_by_user"));
            QCOMPARE(upstream->requestCount(), kind == QLatin1String("upstream_request") ? 0 : 1);
            QVERIFY(sandboxesGone());
            return;
        }
        QCOMPARE(view.status, 200);
        QCOMPARE(view.text, action == QLatin1String("edit") ? QStringLiteral("got: 64\n")
                                                            : QStringLiteral("got: 42\n"));
        QCOMPARE(upstream->requestCount(), 2);
        QVERIFY(sandboxesGone());
    }

    void timeoutAppliesOnTimeout_data() {
        QTest::addColumn<QString>("onTimeout");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("text");
        QTest::newRow("deny") << "deny" << 200 << "got: User declined to run this code.";
        QTest::newRow("continue") << "continue" << 200 << "got: 42\n";
        QTest::newRow("abort") << "abort" << 409 << "";
    }

    void timeoutAppliesOnTimeout() {
        QFETCH(QString, onTimeout);
        QFETCH(int, status);
        QFETCH(QString, text);
        setBreakpoints({{QStringLiteral("code"), true},
                        {QStringLiteral("timeout_s"), 0.2},
                        {QStringLiteral("on_timeout"), onTimeout}});
        auto client = start(false, requestFor(false, QStringLiteral("print(6*7)"), false));
        const ClientView view = viewOf(finish(*client), false, false);
        QCOMPARE(view.status, status);
        QCOMPARE(view.text, text);
        const QList<QJsonObject> resumed = eventsOf(InspectorEvent::Kind::Resumed);
        QCOMPARE(resumed.size(), 1);
        QCOMPARE(resumed.first().value(QStringLiteral("decision")).toString(),
                 QStringLiteral("timed_out"));
        QCOMPARE(eventsOf(InspectorEvent::Kind::CodeExecuted)
                     .first()
                     .value(QStringLiteral("decision"))
                     .toString(),
                 QStringLiteral("timed_out"));
        QCOMPARE(broker()->pendingCount(), 0);
    }

    void clientHangUpAbortsItsPause() {
        setBreakpoints({{QStringLiteral("code"), true}});
        auto client = start(false, requestFor(false, QStringLiteral("print(6*7)"), true));
        const QJsonObject pause = awaitPause();
        QVERIFY(!pause.isEmpty());
        client->close();
        QVERIFY(QTest::qWaitFor([&] { return broker()->pendingCount() == 0; }, 20000));
        const QList<QJsonObject> resumed = eventsOf(InspectorEvent::Kind::Resumed);
        QCOMPARE(resumed.size(), 1);
        QCOMPARE(resumed.first().value(QStringLiteral("decision")).toString(),
                 QStringLiteral("aborted"));
        QVERIFY(QTest::qWaitFor(
            [&] { return !eventsOf(InspectorEvent::Kind::RequestFailed).isEmpty(); }, 20000));
        QCOMPARE(eventsOf(InspectorEvent::Kind::RequestFailed)
                     .first()
                     .value(QStringLiteral("status"))
                     .toInt(),
                 499);
        QVERIFY(sandboxesGone());
        QCOMPARE(upstream->requestCount(), 1);
        const auto late =
            broker()->resolve(pause.value(QStringLiteral("id")).toString(),
                              {{QStringLiteral("action"), QStringLiteral("continue")}});
        QCOMPARE(int(late.status), int(PauseBroker::ResolveStatus::AlreadyResolved));
    }

    void concurrentPausesResolveIndependently() {
        setBreakpoints({{QStringLiteral("code"), true}});
        auto first = start(false, requestFor(false, QStringLiteral("print(1+1)"), true));
        const QJsonObject p1 = awaitPause(1);
        auto second = start(true, requestFor(true, QStringLiteral("print(2+2)"), false));
        const QJsonObject p2 = awaitPause(2);
        QCOMPARE(p1.value(QStringLiteral("code")).toString(), QStringLiteral("print(1+1)"));
        QCOMPARE(p2.value(QStringLiteral("code")).toString(), QStringLiteral("print(2+2)"));
        QVERIFY(p1.value(QStringLiteral("flow_id")) != p2.value(QStringLiteral("flow_id")));
        // Reverse order: the later one first, edited; the earlier one is still waiting.
        QCOMPARE(int(broker()
                         ->resolve(p2.value(QStringLiteral("id")).toString(),
                                   {{QStringLiteral("action"), QStringLiteral("continue")},
                                    {QStringLiteral("code"), QStringLiteral("print(3+3)")}})
                         .status),
                 int(PauseBroker::ResolveStatus::Resolved));
        const ClientView v2 = viewOf(finish(*second), true, false);
        QCOMPARE(v2.text, QStringLiteral("got: 6\n"));
        QCOMPARE(broker()->pendingCount(), 1);
        QVERIFY(!first->hasCompleteResponse());
        QCOMPARE(int(broker()
                         ->resolve(p1.value(QStringLiteral("id")).toString(),
                                   {{QStringLiteral("action"), QStringLiteral("deny")}})
                         .status),
                 int(PauseBroker::ResolveStatus::Resolved));
        const ClientView v1 = viewOf(finish(*first), false, true);
        QCOMPARE(v1.text, QStringLiteral("got: User declined to run this code."));
        QVERIFY(sandboxesGone());
    }

    void matchFilters_data() {
        QTest::addColumn<QJsonObject>("match");
        QTest::addColumn<bool>("pauses");
        const auto m = [](const char *key, const QString &value) {
            return QJsonObject{{QLatin1String(key), value}};
        };
        QTest::newRow("model hit") << m("model", QStringLiteral("gpt-5")) << true;
        QTest::newRow("model miss") << m("model", QStringLiteral("gpt-4o")) << false;
        QTest::newRow("session hit") << m("session_id", QStringLiteral("s-1")) << true;
        QTest::newRow("session miss") << m("session_id", QStringLiteral("s-2")) << false;
        QTest::newRow("regex hit") << m("code_regex", QStringLiteral("6\\*\\d")) << true;
        QTest::newRow("regex miss") << m("code_regex", QStringLiteral("import os")) << false;
        QTest::newRow("all must match")
            << QJsonObject{{QStringLiteral("model"), QStringLiteral("gpt-5")},
                           {QStringLiteral("code_regex"), QStringLiteral("import os")}}
            << false;
    }

    void matchFilters() {
        QFETCH(QJsonObject, match);
        QFETCH(bool, pauses);
        setBreakpoints({{QStringLiteral("code"), true}, {QStringLiteral("match"), match}});
        auto client = start(
            false, requestFor(false, QStringLiteral("print(6*7)"), false, QStringLiteral("s-1")));
        if (pauses) {
            const QJsonObject pause = awaitPause();
            QVERIFY(!pause.isEmpty());
            broker()->resolve(pause.value(QStringLiteral("id")).toString(),
                              {{QStringLiteral("action"), QStringLiteral("continue")}});
        }
        const ClientView view = viewOf(finish(*client), false, false);
        QCOMPARE(view.status, 200);
        QCOMPARE(view.text, QStringLiteral("got: 42\n"));
        QCOMPARE(eventsOf(InspectorEvent::Kind::Paused).size(), pauses ? 1 : 0);
    }

    void pausedSessionSandboxIsPinned() {
        setBreakpoints({{QStringLiteral("code"), true}});
        auto warm = start(
            false, requestFor(false, QStringLiteral("x = 5"), false, QStringLiteral("pinned")));
        broker()->setAutoApprove(QStringLiteral("pinned"), true); // the first run needs no stop
        QVERIFY(QTest::qWaitFor([&] { return warm->hasCompleteResponse(); }, 60000));
        QCOMPARE(warm->take().status, 200);
        QCOMPARE(eventsOf(InspectorEvent::Kind::Paused).size(), 0);
        broker()->setAutoApprove(QStringLiteral("pinned"), false);
        QCOMPARE(stack->registry()->size(), 1);

        auto client = start(false, requestFor(false, QStringLiteral("print(x*2)"), false,
                                              QStringLiteral("pinned")));
        const QJsonObject pause = awaitPause();
        QVERIFY(!pause.isEmpty());
        // An hour later the idle sweep runs: the paused session sandbox stays.
        const qint64 later = QDateTime::currentMSecsSinceEpoch() + 3600 * 1000;
        stack->registry()->setClock([later] { return later; });
        auto pruned = stack->registry()->pruneExpired();
        QVERIFY(QTest::qWaitFor([&] { return pruned.isFinished(); }, 20000));
        QCOMPARE(stack->registry()->size(), 1);
        stack->registry()->setClock({});
        broker()->resolve(pause.value(QStringLiteral("id")).toString(),
                          {{QStringLiteral("action"), QStringLiteral("continue")}});
        const ClientView view = viewOf(finish(*client), false, false);
        QCOMPARE(view.text, QStringLiteral("got: 10\n")); // the same interpreter: x survived
    }

    void unknownAndInvalidResolutions() {
        QCOMPARE(int(broker()
                         ->resolve(QStringLiteral("pause_nope"),
                                   {{QStringLiteral("action"), QStringLiteral("continue")}})
                         .status),
                 int(PauseBroker::ResolveStatus::NotFound));
        setBreakpoints({{QStringLiteral("code"), true}});
        auto client = start(false, requestFor(false, QStringLiteral("print(6*7)"), false));
        const QString id = awaitPause().value(QStringLiteral("id")).toString();
        for (const QJsonObject &bad :
             {QJsonObject{{QStringLiteral("action"), QStringLiteral("later")}},
              QJsonObject{{QStringLiteral("action"), QStringLiteral("continue")},
                          {QStringLiteral("code"), 5}},
              QJsonObject{{QStringLiteral("action"), QStringLiteral("continue")},
                          {QStringLiteral("body"), QJsonObject()}}}) {
            const auto r = broker()->resolve(id, bad);
            QCOMPARE(int(r.status), int(PauseBroker::ResolveStatus::Invalid));
            QVERIFY(!r.error.isEmpty());
        }
        QCOMPARE(broker()->pendingCount(), 1); // bad input changes nothing
        broker()->resolve(id, {{QStringLiteral("action"), QStringLiteral("abort")}});
        QCOMPARE(viewOf(finish(*client), false, false).status, 409);
    }
};

QTEST_GUILESS_MAIN(TestBreakpoints)
#include "tst_breakpoints.moc"
