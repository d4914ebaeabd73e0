// The Jupyter message decoder: JupyterKernelChannel reading arbitrary kernel WebSocket frames
// during a run, over a real loopback WebSocket (a QWebSocketServer plays the kernel, as in
// tests/remote/tst_jupyterkernelchannel.cpp). Each input line is one text frame; "@MSG@" in it
// becomes the msg_id of the run's execute_request, so the fuzzer reaches the per-run state
// machine (stream, results, errors, replies, status, restarts). Afterwards a well-formed
// execute_reply + idle end the run. Invariants: the run finishes; captured output stays within
// the cap (plus the one-line truncation notice); an error's traceback has no ANSI escapes left.
#include "fuzzsupport.h"
#include "sandbox/remote/jupyterkernelchannel.h"
#include "support/futurewait.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QWebSocket>
#include <QWebSocketServer>

#include <memory>

using namespace loopscope;

namespace {

constexpr qint64 kCap = 256;

struct Kernel {
    QWebSocketServer server{QStringLiteral("kernel"), QWebSocketServer::NonSecureMode};
    QWebSocket *socket = nullptr;
    QStringList received;
    QNetworkAccessManager nam;
    std::unique_ptr<JupyterKernelChannel> channel;

    Kernel() {
        if (!server.listen(QHostAddress::LocalHost, 0))
            std::abort();
        QObject::connect(&server, &QWebSocketServer::newConnection, &server, [this] {
            socket = server.nextPendingConnection();
            QObject::connect(socket, &QWebSocket::textMessageReceived, socket,
                             [this](const QString &text) { received << text; });
        });
    }
    void newChannel() {
        channel.reset();
        if (socket)
            socket->deleteLater(); // the server's end of the old channel
        socket = nullptr;
        received.clear();
        JupyterKernelChannel::Options options;
        options.outputCapBytes = kCap;
        options.connectTimeoutMs = 5000;
        channel = std::make_unique<JupyterKernelChannel>(
            &nam, QStringLiteral("http://127.0.0.1:%1").arg(server.serverPort()),
            QStringLiteral("token-1234"), QStringLiteral("kernel-1"), options);
    }
    // msg_id of the newest execute_request after index `from`.
    QString executeRequestAfter(qsizetype from) const {
        for (qsizetype i = received.size() - 1; i >= from; --i) {
            const QJsonObject header = QJsonDocument::fromJson(received.at(i).toUtf8())
                                           .object()
                                           .value(QLatin1String("header"))
                                           .toObject();
            if (header.value(QLatin1String("msg_type")).toString() ==
                QLatin1String("execute_request"))
                return header.value(QLatin1String("msg_id")).toString();
        }
        return {};
    }
    void send(const QString &msgType, const QString &channelName, const QString &parent,
              const QJsonObject &content) {
        const QJsonObject message{
            {QStringLiteral("header"), QJsonObject{{QStringLiteral("msg_id"), QStringLiteral("k")},
                                                   {QStringLiteral("msg_type"), msgType}}},
            {QStringLiteral("parent_header"), QJsonObject{{QStringLiteral("msg_id"), parent}}},
            {QStringLiteral("content"), content},
            {QStringLiteral("channel"), channelName}};
        socket->sendTextMessage(
            QString::fromUtf8(QJsonDocument(message).toJson(QJsonDocument::Compact)));
    }
};

Kernel &kernel() {
    static Kernel *k = [] {
        loopscope::fuzz::ensureApp();
        auto *created = new Kernel;
        created->newChannel();
        return created;
    }();
    return *k;
}

// Turns the event loop until nothing new arrives for a few turns (loopback delivers at once).
void settle(const Kernel &k, const QFuture<Outcome<ExecutionResult>> &future) {
    QElapsedTimer clock;
    clock.start();
    int idle = 0;
    qsizetype seen = -1;
    bool finished = false;
    while (idle < 6 && clock.elapsed() < 2000) {
        QCoreApplication::processEvents(QEventLoop::AllEvents);
        if (k.received.size() != seen || future.isFinished() != finished) {
            seen = k.received.size();
            finished = future.isFinished();
            idle = 0;
        } else {
            ++idle;
        }
    }
}

bool spinUntil(const std::function<bool()> &done, int maxMs) {
    QElapsedTimer clock;
    clock.start();
    while (!done() && clock.elapsed() < maxMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    return done();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Kernel &k = kernel();
    const qsizetype before = k.received.size();
    QFuture<Outcome<ExecutionResult>> future = k.channel->execute(QStringLiteral("print(1)"));
    if (!spinUntil([&] { return !k.executeRequestAfter(before).isEmpty() && k.socket; }, 20000))
        std::abort(); // the channel never reached the kernel
    QString msgId = k.executeRequestAfter(before);

    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    for (const QByteArray &line : bytes.split('\n')) {
        if (future.isFinished() || !k.socket)
            break;
        QString frame = QString::fromUtf8(line);
        frame.replace(QLatin1String("@MSG@"), msgId);
        k.socket->sendTextMessage(frame);
    }
    // End the run properly; answer a re-sent request (after an "aborted" reply) or a restart
    // nudge the same way.
    for (int round = 0; round < 4 && !future.isFinished(); ++round) {
        settle(k, future);
        if (!k.socket)
            break;
        const QString latest = k.executeRequestAfter(before);
        if (!latest.isEmpty())
            msgId = latest;
        for (qsizetype i = before; i < k.received.size(); ++i) {
            const QJsonObject header = QJsonDocument::fromJson(k.received.at(i).toUtf8())
                                           .object()
                                           .value(QLatin1String("header"))
                                           .toObject();
            if (header.value(QLatin1String("msg_type")).toString() ==
                QLatin1String("kernel_info_request"))
                k.send(QStringLiteral("status"), QStringLiteral("iopub"),
                       header.value(QLatin1String("msg_id")).toString(),
                       {{QStringLiteral("execution_state"), QStringLiteral("idle")}});
        }
        k.send(QStringLiteral("execute_reply"), QStringLiteral("shell"), msgId,
               {{QStringLiteral("status"), QStringLiteral("ok")},
                {QStringLiteral("execution_count"), 1}});
        k.send(QStringLiteral("status"), QStringLiteral("iopub"), msgId,
               {{QStringLiteral("execution_state"), QStringLiteral("idle")}});
        spinUntil([&] { return future.isFinished(); }, 200);
    }
    if (!future.isFinished()) {
        // A state the closing messages cannot end (e.g. a restart REST call that the stand-in
        // kernel does not serve): shut the channel down; the run must then fail, not hang.
        k.channel->shutdown(QStringLiteral("fuzz: reset"));
        FUZZ_CHECK(spinUntil([&] { return future.isFinished(); }, 10000));
        k.newChannel();
        return 0;
    }
    const Outcome<ExecutionResult> outcome = future.result();
    if (outcome.ok()) {
        // Never more than the cap: the cut is a note, not text added to the output.
        FUZZ_CHECK(outcome.value.stdoutText.toUtf8().size() <= kCap);
        FUZZ_CHECK(outcome.value.stderrText.toUtf8().size() <= kCap);
        if (outcome.value.error)
            FUZZ_CHECK(!outcome.value.error->traceback.contains(QStringLiteral("\x1b[")));
    } else {
        k.newChannel(); // a failed run may leave the kernel "restarting": start clean
    }
    return 0;
}
