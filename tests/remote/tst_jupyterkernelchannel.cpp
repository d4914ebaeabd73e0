#include "sandbox/remote/jupyterkernelchannel.h"
#include "support/futurewait.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QSignalSpy>
#include <QUrlQuery>
#include <QWebSocket>
#include <QWebSocketServer>
#include <QtTest>

using namespace loopscope;

// Message orderings a real jupyter-server cannot be made to produce on demand: a scripted
// kernel WebSocket (QWebSocketServer on loopback, same JSON framing) plays them step by step.
// Everything else is covered against the real server in tst_jupyterbackend.
class TestJupyterKernelChannel : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void waitsForReplyAndIdleInEitherOrder_data();
    void waitsForReplyAndIdleInEitherOrder();
    void kernelDeathFailsTheRun();
    void requestShapeAndAuth();
    void abortedRequestIsSentAgain();

private:
    QJsonObject lastRequest() const {
        return QJsonDocument::fromJson(m_received.last().toUtf8()).object();
    }
    void sendToClient(const QString &msgType, const QString &channel, const QString &parentId,
                      const QJsonObject &content) {
        static int counter = 0;
        const QJsonObject message{
            {QStringLiteral("header"),
             QJsonObject{{QStringLiteral("msg_id"), QStringLiteral("k_%1").arg(++counter)},
                         {QStringLiteral("msg_type"), msgType},
                         {QStringLiteral("session"), QStringLiteral("kernel-session")},
                         {QStringLiteral("version"), QStringLiteral("5.3")}}},
            {QStringLiteral("parent_header"),
             parentId.isEmpty() ? QJsonObject()
                                : QJsonObject{{QStringLiteral("msg_id"), parentId}}},
            {QStringLiteral("metadata"), QJsonObject()},
            {QStringLiteral("content"), content},
            {QStringLiteral("channel"), channel}};
        m_client->sendTextMessage(
            QString::fromUtf8(QJsonDocument(message).toJson(QJsonDocument::Compact)));
    }
    void step(const QString &what, const QString &parent) {
        if (what == QLatin1String("stream-out"))
            sendToClient(QStringLiteral("stream"), QStringLiteral("iopub"), parent,
                         {{QStringLiteral("name"), QStringLiteral("stdout")},
                          {QStringLiteral("text"), QStringLiteral("out\n")}});
        else if (what == QLatin1String("stream-err"))
            sendToClient(QStringLiteral("stream"), QStringLiteral("iopub"), parent,
                         {{QStringLiteral("name"), QStringLiteral("stderr")},
                          {QStringLiteral("text"), QStringLiteral("err\n")}});
        else if (what == QLatin1String("result"))
            sendToClient(
                QStringLiteral("execute_result"), QStringLiteral("iopub"), parent,
                {{QStringLiteral("execution_count"), 7},
                 {QStringLiteral("data"),
                  QJsonObject{{QStringLiteral("text/plain"), QStringLiteral("42")},
                              {QStringLiteral("text/html"), QStringLiteral("<b>42</b>")}}}});
        else if (what == QLatin1String("error"))
            sendToClient(QStringLiteral("error"), QStringLiteral("iopub"), parent,
                         {{QStringLiteral("ename"), QStringLiteral("ValueError")},
                          {QStringLiteral("evalue"), QStringLiteral("bad")},
                          {QStringLiteral("traceback"),
                           QJsonArray{QStringLiteral("\x1b[0;31mValueError\x1b[0m  Traceback"),
                                      QStringLiteral("\x1b[1;32m----> 1\x1b[0m raise")}}});
        else if (what == QLatin1String("busy") || what == QLatin1String("idle"))
            sendToClient(QStringLiteral("status"), QStringLiteral("iopub"), parent,
                         {{QStringLiteral("execution_state"), what}});
        else if (what == QLatin1String("reply"))
            sendToClient(QStringLiteral("execute_reply"), QStringLiteral("shell"), parent,
                         {{QStringLiteral("status"), QStringLiteral("ok")},
                          {QStringLiteral("execution_count"), 7}});
        else if (what == QLatin1String("aborted-reply"))
            sendToClient(QStringLiteral("execute_reply"), QStringLiteral("shell"), parent,
                         {{QStringLiteral("status"), QStringLiteral("aborted")}});
        else if (what == QLatin1String("foreign-stream")) // another client's execution
            sendToClient(QStringLiteral("stream"), QStringLiteral("iopub"),
                         QStringLiteral("someone-else"),
                         {{QStringLiteral("name"), QStringLiteral("stdout")},
                          {QStringLiteral("text"), QStringLiteral("NOT OURS\n")}});
        else if (what == QLatin1String("foreign-idle"))
            sendToClient(QStringLiteral("status"), QStringLiteral("iopub"),
                         QStringLiteral("someone-else"),
                         {{QStringLiteral("execution_state"), QStringLiteral("idle")}});
        else
            QFAIL(qPrintable(what));
    }

    std::unique_ptr<QWebSocketServer> m_server;
    QWebSocket *m_client = nullptr;
    QStringList m_received;
    QNetworkRequest m_handshake;
    std::unique_ptr<QNetworkAccessManager> m_nam;
    std::unique_ptr<JupyterKernelChannel> m_channel;
};

void TestJupyterKernelChannel::init() {
    m_server = std::make_unique<QWebSocketServer>(QStringLiteral("kernel"),
                                                  QWebSocketServer::NonSecureMode);
    QVERIFY(m_server->listen(QHostAddress::LocalHost, 0));
    m_received.clear();
    m_client = nullptr;
    connect(m_server.get(), &QWebSocketServer::newConnection, this, [this] {
        m_client = m_server->nextPendingConnection();
        m_handshake = m_client->request();
        connect(m_client, &QWebSocket::textMessageReceived, this,
                [this](const QString &text) { m_received << text; });
    });
    m_nam = std::make_unique<QNetworkAccessManager>();
    m_channel = std::make_unique<JupyterKernelChannel>(
        m_nam.get(), QStringLiteral("http://127.0.0.1:%1").arg(m_server->serverPort()),
        QStringLiteral("secret-token-1234"), QStringLiteral("kernel-1"),
        JupyterKernelChannel::Options{});
}

void TestJupyterKernelChannel::cleanup() {
    m_channel.reset();
    m_nam.reset();
    m_server.reset();
}

void TestJupyterKernelChannel::waitsForReplyAndIdleInEitherOrder_data() {
    QTest::addColumn<QStringList>("script");
    QTest::addColumn<QString>("stdoutText");
    QTest::addColumn<QString>("stderrText");
    QTest::addColumn<bool>("hasError");
    // The last step is the one that must complete the run; nothing before it may.
    QTest::newRow("reply before idle, output in between")
        << QStringList{QStringLiteral("busy"), QStringLiteral("stream-out"),
                       QStringLiteral("reply"), QStringLiteral("stream-err"),
                       QStringLiteral("idle")}
        << QStringLiteral("out\n") << QStringLiteral("err\n") << false;
    QTest::newRow("idle before reply")
        << QStringList{QStringLiteral("busy"), QStringLiteral("stream-out"), QStringLiteral("idle"),
                       QStringLiteral("reply")}
        << QStringLiteral("out\n") << QString() << false;
    QTest::newRow("other executions are ignored") << QStringList{QStringLiteral("foreign-idle"),
                                                                 QStringLiteral("busy"),
                                                                 QStringLiteral("foreign-stream"),
                                                                 QStringLiteral("result"),
                                                                 QStringLiteral("reply"),
                                                                 QStringLiteral("foreign-idle"),
                                                                 QStringLiteral("idle")}
                                                  << QStringLiteral("42\n") << QString() << false;
    QTest::newRow("error with coloured traceback")
        << QStringList{QStringLiteral("busy"), QStringLiteral("error"), QStringLiteral("idle"),
                       QStringLiteral("reply")}
        << QString() << QString() << true;
}

void TestJupyterKernelChannel::waitsForReplyAndIdleInEitherOrder() {
    QFETCH(QStringList, script);
    QFETCH(QString, stdoutText);
    QFETCH(QString, stderrText);
    QFETCH(bool, hasError);
    auto future = m_channel->execute(QStringLiteral("code"));
    QTRY_VERIFY_WITH_TIMEOUT(m_received.size() == 1, 10000);
    const QString msgId = lastRequest()
                              .value(QLatin1String("header"))
                              .toObject()
                              .value(QLatin1String("msg_id"))
                              .toString();
    QVERIFY(!msgId.isEmpty());
    // After each step but the last, an empty stdout chunk of the run as a barrier: the channel
    // reads its socket in order, so once it reports that chunk it has handled the step (or the
    // run finished at the step, wrongly, and the chunk is ignored).
    QSignalSpy chunks(m_channel.get(), &JupyterKernelChannel::outputReceived);
    for (qsizetype i = 0; i < script.size(); ++i) {
        step(script[i], msgId);
        if (i + 1 < script.size()) {
            const qsizetype before = chunks.size();
            sendToClient(QStringLiteral("stream"), QStringLiteral("iopub"), msgId,
                         {{QStringLiteral("name"), QStringLiteral("stdout")},
                          {QStringLiteral("text"), QString()}});
            QTRY_VERIFY_WITH_TIMEOUT(
                future.isFinished() ||
                    (chunks.size() > before && chunks.last().at(2).toString().isEmpty()),
                10000);
            QVERIFY2(
                !future.isFinished(),
                qPrintable(QStringLiteral("finished after step %1 (%2)").arg(i).arg(script[i])));
        }
    }
    const auto outcome = awaitFuture(future);
    QVERIFY2(outcome.ok(), qPrintable(outcome.error));
    QCOMPARE(outcome.value.stdoutText, stdoutText);
    QCOMPARE(outcome.value.stderrText, stderrText);
    QCOMPARE(outcome.value.executionCount, 7);
    QCOMPARE(outcome.value.error.has_value(), hasError);
    if (hasError) {
        QCOMPARE(outcome.value.error->name, QStringLiteral("ValueError"));
        QCOMPARE(outcome.value.error->value, QStringLiteral("bad"));
        QCOMPARE(outcome.value.error->traceback,
                 QStringLiteral("ValueError  Traceback\n----> 1 raise"));
    }
}

void TestJupyterKernelChannel::kernelDeathFailsTheRun() {
    QSignalSpy restarted(m_channel.get(), &JupyterKernelChannel::kernelRestarted);
    auto future = m_channel->execute(QStringLiteral("import os; os._exit(1)"));
    QTRY_VERIFY_WITH_TIMEOUT(m_received.size() == 1, 10000);
    const QString msgId = lastRequest()
                              .value(QLatin1String("header"))
                              .toObject()
                              .value(QLatin1String("msg_id"))
                              .toString();
    step(QStringLiteral("busy"), msgId);
    // The server's own status message: no parent.
    sendToClient(QStringLiteral("status"), QStringLiteral("iopub"), QString(),
                 {{QStringLiteral("execution_state"), QStringLiteral("restarting")}});
    const auto outcome = awaitFuture(future);
    QVERIFY(!outcome.ok());
    QVERIFY2(outcome.error.contains(QLatin1String("kernel-1 died")), qPrintable(outcome.error));
    QCOMPARE(restarted.size(), 1);

    // The next run first makes sure iopub is back (kernel_info_request), then executes.
    auto next = m_channel->execute(QStringLiteral("print(1)"));
    QTRY_VERIFY_WITH_TIMEOUT(m_received.size() == 2, 10000);
    QCOMPARE(lastRequest()
                 .value(QLatin1String("header"))
                 .toObject()
                 .value(QLatin1String("msg_type"))
                 .toString(),
             QStringLiteral("kernel_info_request"));
    const QString nudgeId = lastRequest()
                                .value(QLatin1String("header"))
                                .toObject()
                                .value(QLatin1String("msg_id"))
                                .toString();
    step(QStringLiteral("busy"), nudgeId);
    QTRY_VERIFY_WITH_TIMEOUT(m_received.size() == 3, 10000);
    QCOMPARE(lastRequest()
                 .value(QLatin1String("header"))
                 .toObject()
                 .value(QLatin1String("msg_type"))
                 .toString(),
             QStringLiteral("execute_request"));
    const QString execId = lastRequest()
                               .value(QLatin1String("header"))
                               .toObject()
                               .value(QLatin1String("msg_id"))
                               .toString();
    step(QStringLiteral("stream-out"), execId);
    step(QStringLiteral("reply"), execId);
    step(QStringLiteral("idle"), execId);
    const auto after = awaitFuture(next);
    QVERIFY2(after.ok(), qPrintable(after.error));
    QCOMPARE(after.value.stdoutText, QStringLiteral("out\n"));
}

void TestJupyterKernelChannel::requestShapeAndAuth() {
    auto future = m_channel->execute(QStringLiteral("print('hé')"));
    QTRY_VERIFY_WITH_TIMEOUT(m_received.size() == 1, 10000);
    QCOMPARE(m_handshake.rawHeader("Authorization"), QByteArray("token secret-token-1234"));
    QCOMPARE(m_handshake.url().path(), QStringLiteral("/api/kernels/kernel-1/channels"));
    QCOMPARE(QUrlQuery(m_handshake.url()).queryItemValue(QStringLiteral("session_id")),
             m_channel->sessionId());
    const QJsonObject request = lastRequest();
    QCOMPARE(request.value(QLatin1String("channel")).toString(), QStringLiteral("shell"));
    const QJsonObject header = request.value(QLatin1String("header")).toObject();
    QCOMPARE(header.value(QLatin1String("msg_type")).toString(), QStringLiteral("execute_request"));
    QCOMPARE(header.value(QLatin1String("version")).toString(), QStringLiteral("5.3"));
    QCOMPARE(header.value(QLatin1String("session")).toString(), m_channel->sessionId());
    const QJsonObject content = request.value(QLatin1String("content")).toObject();
    QCOMPARE(content.value(QLatin1String("code")).toString(), QStringLiteral("print('hé')"));
    QCOMPARE(content.value(QLatin1String("silent")).toBool(true), false);
    QCOMPARE(content.value(QLatin1String("allow_stdin")).toBool(true), false);
    QCOMPARE(content.value(QLatin1String("stop_on_error")).toBool(true), false);
    m_channel->shutdown(QStringLiteral("test over"));
    QCOMPARE(awaitFuture(future).error, QStringLiteral("test over"));
}

void TestJupyterKernelChannel::abortedRequestIsSentAgain() {
    auto future = m_channel->execute(QStringLiteral("print(x)"));
    QTRY_VERIFY_WITH_TIMEOUT(m_received.size() == 1, 10000);
    const QString first = lastRequest()
                              .value(QLatin1String("header"))
                              .toObject()
                              .value(QLatin1String("msg_id"))
                              .toString();
    // ipykernel refuses a request that arrives while it is still clearing an earlier error.
    step(QStringLiteral("busy"), first);
    step(QStringLiteral("aborted-reply"), first);
    step(QStringLiteral("idle"), first);
    QTRY_VERIFY_WITH_TIMEOUT(m_received.size() == 2, 10000);
    const QJsonObject again = lastRequest();
    const QString second =
        again.value(QLatin1String("header")).toObject().value(QLatin1String("msg_id")).toString();
    QVERIFY(second != first);
    QCOMPARE(
        again.value(QLatin1String("content")).toObject().value(QLatin1String("code")).toString(),
        QStringLiteral("print(x)"));
    QVERIFY(!future.isFinished());
    step(QStringLiteral("stream-out"), second);
    step(QStringLiteral("reply"), second);
    step(QStringLiteral("idle"), second);
    const auto outcome = awaitFuture(future);
    QVERIFY2(outcome.ok(), qPrintable(outcome.error));
    QCOMPARE(outcome.value.stdoutText, QStringLiteral("out\n"));
}

QTEST_GUILESS_MAIN(TestJupyterKernelChannel)
#include "tst_jupyterkernelchannel.moc"
