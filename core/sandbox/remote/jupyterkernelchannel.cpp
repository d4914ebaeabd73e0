#include "sandbox/remote/jupyterkernelchannel.h"

#include "inspect/credentialpolicy.h"
#include "sandbox/sandboxoutputcoalescer.h"

#include "sandbox/remote/jupyterrest.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QRegularExpression>
#include <QTimer>
#include <QUrlQuery>
#include <QUuid>
#include <QWebSocket>

namespace loopscope {

Q_LOGGING_CATEGORY(lcJupyter, "loopscope.sandbox.jupyter", QtWarningMsg)

namespace {

QString newId() {
    return QUuid::createUuid().toString(QUuid::WithoutBraces);
}

// IPython colours its tracebacks; the tool output and the window want plain text. Removing
// one sequence can join the pieces of another ("\x1b[\x1b[0m0m"), so repeat until none is
// left; an ESC that starts no complete sequence is dropped too (found by fuzz_jupyter).
QString stripAnsi(QString text) {
    static const QRegularExpression ansi(QStringLiteral("\x1b\\[[0-9;?]*[ -/]*[@-~]"));
    for (qsizetype before = -1; before != text.size();) {
        before = text.size();
        text.remove(ansi);
    }
    return text.remove(QChar(0x1b));
}

QString joinTraceback(const QJsonValue &value) {
    if (value.isString())
        return stripAnsi(value.toString());
    QStringList lines;
    const QJsonArray array = value.toArray();
    for (const QJsonValue &line : array)
        lines << line.toString();
    return stripAnsi(lines.join(QLatin1Char('\n')));
}

} // namespace

JupyterKernelChannel::JupyterKernelChannel(QNetworkAccessManager *nam, const QString &apiBase,
                                           const QString &token, const QString &kernelId,
                                           const Options &options, QObject *parent)
    : QObject(parent)
    , m_nam(nam)
    , m_apiBase(apiBase)
    , m_token(token)
    , m_kernelId(kernelId)
    , m_options(options)
    , m_sessionId(newId())
    , m_runTimer(new QTimer(this))
    , m_graceTimer(new QTimer(this))
    , m_connectTimer(new QTimer(this))
    , m_nudgeTimer(new QTimer(this)) {
    connect(m_nudgeTimer, &QTimer::timeout, this, &JupyterKernelChannel::nudgeAgain);
    m_runTimer->setSingleShot(true);
    m_graceTimer->setSingleShot(true);
    m_connectTimer->setSingleShot(true);
    connect(m_runTimer, &QTimer::timeout, this, &JupyterKernelChannel::onRunTimeout);
    connect(m_graceTimer, &QTimer::timeout, this, &JupyterKernelChannel::restartKernel);
    connect(m_connectTimer, &QTimer::timeout, this, [this] {
        if (m_state != State::Connecting || !m_socket)
            return;
        m_intentionalClose = true;
        m_socket->abort();
        m_state = State::Disconnected;
        diagnoseAndFail(
            QStringLiteral("no WebSocket connection within %1 ms").arg(m_options.connectTimeoutMs));
    });
}

JupyterKernelChannel::~JupyterKernelChannel() {
    shutdown(QStringLiteral("the Jupyter backend was destroyed"));
}

QUrl JupyterKernelChannel::restUrl(const QString &suffix) const {
    return jupyterrest::apiUrl(m_apiBase, QStringLiteral("/api/kernels/") + m_kernelId + suffix);
}

QString JupyterKernelChannel::masked() const {
    return CredentialPolicy::mask(m_token);
}

QFuture<Outcome<ExecutionResult>> JupyterKernelChannel::execute(const QString &code,
                                                                const SandboxOutputSink &onOutput,
                                                                const CancellationToken &cancel) {
    auto job = std::make_shared<Job>();
    job->code = code;
    if (onOutput) {
        SandboxOutputCoalescer::Limits limits;
        limits.capBytes = m_options.liveOutputCapBytes;
        job->live = std::make_shared<SandboxOutputCoalescer>(onOutput, limits);
    }
    job->promise.start();
    auto future = job->promise.future();
    m_queue.enqueue(job);
    if (cancel) {
        const QPointer<JupyterKernelChannel> self(this);
        const std::weak_ptr<Job> weak = job;
        cancel->onCancel([self, weak] {
            if (const auto j = weak.lock(); self && j)
                self->cancel(j);
        });
    }
    pump();
    return future;
}

void JupyterKernelChannel::cancel(const std::shared_ptr<Job> &job) {
    if (job != m_job) {
        if (m_queue.removeOne(job)) {
            job->promise.addResult(
                Outcome<ExecutionResult>::failure(SandboxBackend::kRunCancelled));
            job->promise.finish();
        }
        return; // finished already
    }
    if (!job->sent) {
        complete(Outcome<ExecutionResult>::failure(SandboxBackend::kRunCancelled));
        return;
    }
    if (job->cancelled || job->timedOut)
        return; // an interrupt is on its way already
    job->cancelled = true;
    // The channel's grace, not the local backend's 500 ms: the interrupt travels over REST
    // through the server, and a kernel on a loaded or distant machine restarted for being slow
    // to answer loses the session's state (seen under load in tst_jupyterbackend).
    interruptKernel(m_options.interruptGraceMs);
}

void JupyterKernelChannel::interruptKernel(int graceMs) {
    // Interrupt first (state survives); the grace timer restarts the kernel if that fails.
    QNetworkRequest request(restUrl(QStringLiteral("/interrupt")));
    jupyterrest::authorise(request, m_token);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setTransferTimeout(m_options.requestTimeoutMs);
    QNetworkReply *reply = m_nam->post(request, QByteArrayLiteral("{}"));
    connect(reply, &QNetworkReply::finished, reply, &QObject::deleteLater);
    m_graceTimer->start(graceMs);
}

void JupyterKernelChannel::pump() {
    if (m_job || m_queue.isEmpty())
        return;
    m_job = m_queue.dequeue();
    m_job->elapsed.start();
    if (m_state == State::Connected)
        send();
    else if (m_state == State::Disconnected)
        openSocket();
    // Connecting: onConnected() sends.
}

void JupyterKernelChannel::openSocket() {
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket->deleteLater();
    }
    m_socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest, this);
    m_socket->setMaxAllowedIncomingMessageSize(64 * 1024 * 1024);
    connect(m_socket, &QWebSocket::connected, this, &JupyterKernelChannel::onConnected);
    connect(m_socket, &QWebSocket::disconnected, this, &JupyterKernelChannel::onDisconnected);
    connect(m_socket, &QWebSocket::textMessageReceived, this, &JupyterKernelChannel::onMessage);
    // A refused or rejected handshake may report only an error, without `disconnected`.
    connect(m_socket, qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), this,
            [this](QAbstractSocket::SocketError) {
                if (m_state == State::Connecting)
                    onDisconnected();
            });
    QUrl url = jupyterrest::webSocketUrl(
        m_apiBase, QStringLiteral("/api/kernels/%1/channels").arg(m_kernelId));
    // The same session id on every reconnect lets the server replay what it buffered meanwhile.
    QUrlQuery query;
    query.addQueryItem(QStringLiteral("session_id"), m_sessionId);
    url.setQuery(query);
    QNetworkRequest request(url);
    jupyterrest::authorise(request, m_token);
    m_state = State::Connecting;
    m_intentionalClose = false;
    m_connectTimer->start(m_options.connectTimeoutMs);
    m_socket->open(request);
}

void JupyterKernelChannel::onConnected() {
    m_connectTimer->stop();
    m_state = State::Connected;
    m_reconnects = 0;
    if (m_job && !m_job->sent)
        send();
}

void JupyterKernelChannel::onDisconnected() {
    if (m_state == State::Disconnected)
        return; // already handled (error + disconnected) or closed on purpose
    const bool wasConnecting = m_state == State::Connecting;
    m_state = State::Disconnected;
    m_connectTimer->stop();
    if (m_intentionalClose)
        return;
    const QString error = m_socket ? m_socket->errorString() : QString();
    if (wasConnecting && m_reconnects == 0) {
        // Never got in: say why (kernel gone? token wrong? server down?).
        diagnoseAndFail(error);
        return;
    }
    if (!m_job || !m_job->sent || m_job->restarting)
        return; // idle: the next run reconnects
    if (m_reconnects >= m_options.reconnectAttempts) {
        complete(Outcome<ExecutionResult>::failure(
            QStringLiteral("lost the connection to Jupyter kernel %1 at %2 and could not "
                           "reconnect after %3 attempts: %4")
                .arg(m_kernelId, m_apiBase)
                .arg(m_reconnects)
                .arg(error)));
        return;
    }
    ++m_reconnects;
    QTimer::singleShot(200 * m_reconnects, this, [this] {
        if (m_state == State::Disconnected && m_job && m_job->sent)
            openSocket();
    });
}

void JupyterKernelChannel::diagnoseAndFail(const QString &socketError) {
    if (!m_job)
        return;
    // The WebSocket handshake hides the HTTP status; ask the REST API about the kernel instead.
    QNetworkRequest request(restUrl(QString()));
    jupyterrest::authorise(request, m_token);
    request.setTransferTimeout(m_options.requestTimeoutMs);
    QNetworkReply *reply = m_nam->get(request);
    std::weak_ptr<Job> weak = m_job;
    connect(reply, &QNetworkReply::finished, this, [this, reply, weak, socketError] {
        reply->deleteLater();
        auto job = weak.lock();
        if (!job || job != m_job)
            return;
        const int status = jupyterrest::httpStatus(reply);
        const QByteArray body = reply->readAll();
        QString message;
        if (status == 404)
            message = QStringLiteral("Jupyter kernel %1 not found on %2 (deleted, culled, or the "
                                     "server restarted)")
                          .arg(m_kernelId, m_apiBase);
        else if (jupyterrest::isUnauthorised(status))
            message = jupyterrest::unauthorisedMessage(m_apiBase, m_token, reply, body);
        else if (status == 0)
            message = jupyterrest::unreachableMessage(m_apiBase, reply);
        else
            message = QStringLiteral("cannot open the WebSocket of Jupyter kernel %1 at %2: %3")
                          .arg(m_kernelId, m_apiBase, socketError);
        complete(Outcome<ExecutionResult>::failure(message));
    });
}

QString JupyterKernelChannel::sendShell(const QString &msgType, const QJsonObject &content) {
    const QString msgId = newId();
    const QJsonObject header{
        {QStringLiteral("msg_id"), msgId},
        {QStringLiteral("username"), QStringLiteral("loopscope")},
        {QStringLiteral("session"), m_sessionId},
        {QStringLiteral("date"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
        {QStringLiteral("msg_type"), msgType},
        {QStringLiteral("version"), QStringLiteral("5.3")}};
    const QJsonObject message{{QStringLiteral("header"), header},
                              {QStringLiteral("parent_header"), QJsonObject()},
                              {QStringLiteral("metadata"), QJsonObject()},
                              {QStringLiteral("content"), content},
                              {QStringLiteral("channel"), QStringLiteral("shell")},
                              {QStringLiteral("buffers"), QJsonArray()}};
    qCDebug(lcJupyter) << m_kernelId << "->" << msgType << msgId;
    m_socket->sendTextMessage(
        QString::fromUtf8(QJsonDocument(message).toJson(QJsonDocument::Compact)));
    return msgId;
}

void JupyterKernelChannel::send() {
    if (m_needsNudge) {
        // After the kernel restarted under this socket, iopub reconnects later than shell and
        // would drop the first outputs: poke with kernel_info_request until iopub answers.
        if (!m_nudgeTimer->isActive()) {
            m_nudgeTries = 0;
            m_nudgeIds.clear();
            m_nudgeIds << sendShell(QStringLiteral("kernel_info_request"), QJsonObject());
            m_nudgeTimer->start(500);
        }
        return;
    }
    Job &job = *m_job;
    job.sent = true;
    const QJsonObject content{{QStringLiteral("code"), job.code},
                              {QStringLiteral("silent"), false},
                              {QStringLiteral("store_history"), true},
                              {QStringLiteral("user_expressions"), QJsonObject()},
                              {QStringLiteral("allow_stdin"), false},
                              // Runs are serialised here; with true, ipykernel aborts a request
                              // that arrives right after an error (or a timeout's interrupt).
                              {QStringLiteral("stop_on_error"), false}};
    job.msgId = sendShell(QStringLiteral("execute_request"), content);
    if (m_options.runTimeoutMs > 0)
        m_runTimer->start(m_options.runTimeoutMs);
}

void JupyterKernelChannel::nudgeAgain() {
    if (!m_needsNudge || m_state != State::Connected)
        return;
    if (++m_nudgeTries >= 20) { // ~10 s: go ahead rather than hang
        m_nudgeTimer->stop();
        m_needsNudge = false;
        if (m_job && !m_job->sent)
            send();
        return;
    }
    m_nudgeIds << sendShell(QStringLiteral("kernel_info_request"), QJsonObject());
}

void JupyterKernelChannel::onMessage(const QString &text) {
    qCDebug(lcJupyter) << m_kernelId << "<-" << text.left(300);
    const QJsonObject message = QJsonDocument::fromJson(text.toUtf8()).object();
    const QString type = message.value(QLatin1String("header"))
                             .toObject()
                             .value(QLatin1String("msg_type"))
                             .toString();
    const QJsonObject content = message.value(QLatin1String("content")).toObject();
    const QString parent = message.value(QLatin1String("parent_header"))
                               .toObject()
                               .value(QLatin1String("msg_id"))
                               .toString();

    if (type == QLatin1String("status")) {
        const QString state = content.value(QLatin1String("execution_state")).toString();
        // Sent by the server itself when the kernel process died and was (or could not be)
        // restarted: whatever was running is gone.
        if (state == QLatin1String("restarting") || state == QLatin1String("dead")) {
            if (state == QLatin1String("restarting"))
                m_needsNudge = true;
            if (m_job && m_job->sent && !m_job->restarting) {
                emit kernelRestarted(m_kernelId, QStringLiteral("died"));
                complete(Outcome<ExecutionResult>::failure(
                    QStringLiteral("Jupyter kernel %1 died while running the code (status: %2); "
                                   "its state (variables, imports) is lost")
                        .arg(m_kernelId, state)));
            }
            return;
        }
    }
    if (m_needsNudge && !parent.isEmpty() && m_nudgeIds.contains(parent) &&
        message.value(QLatin1String("channel")).toString() == QLatin1String("iopub")) {
        m_needsNudge = false;
        m_nudgeTimer->stop();
        if (m_job && !m_job->sent && m_state == State::Connected)
            send();
        return;
    }
    if (!m_job || !m_job->sent || parent.isEmpty() || parent != m_job->msgId)
        return;
    Job &job = *m_job;

    if (type == QLatin1String("stream")) {
        appendOutput(content.value(QLatin1String("name")).toString(),
                     content.value(QLatin1String("text")).toString());
    } else if (type == QLatin1String("execute_result") || type == QLatin1String("display_data")) {
        // Figures (the inline matplotlib backend, IPython.display) arrive as base64 PNG.
        const QJsonValue png =
            content.value(QLatin1String("data")).toObject().value(QLatin1String("image/png"));
        if (png.isString())
            appendSandboxImage(job.result, QByteArray::fromBase64(png.toString().toLatin1()));
        if (m_options.includeResultsInStdout) {
            const QString plain = content.value(QLatin1String("data"))
                                      .toObject()
                                      .value(QLatin1String("text/plain"))
                                      .toString();
            if (!plain.isEmpty())
                appendOutput(QStringLiteral("stdout"), plain + QLatin1Char('\n'));
        }
    } else if (type == QLatin1String("error")) {
        if (!job.timedOut && !job.result.error)
            job.result.error =
                ExecutionError{content.value(QLatin1String("ename")).toString(),
                               content.value(QLatin1String("evalue")).toString(),
                               joinTraceback(content.value(QLatin1String("traceback")))};
    } else if (type == QLatin1String("execute_input")) {
        job.result.executionCount = content.value(QLatin1String("execution_count")).toInt();
    } else if (type == QLatin1String("execute_reply")) {
        if (content.value(QLatin1String("status")).toString() == QLatin1String("aborted") &&
            !job.timedOut && !job.cancelled && job.resends < 1 && job.result.stdoutText.isEmpty() &&
            job.result.stderrText.isEmpty()) {
            // Refused unrun (the kernel was still clearing an earlier error): send it again.
            ++job.resends;
            m_runTimer->stop();
            job.sent = false;
            job.gotIdle = false;
            send();
            return;
        }
        job.gotReply = true;
        if (content.contains(QLatin1String("execution_count")))
            job.result.executionCount = content.value(QLatin1String("execution_count")).toInt();
        if (content.value(QLatin1String("status")).toString() == QLatin1String("error") &&
            !job.timedOut && !job.result.error)
            job.result.error =
                ExecutionError{content.value(QLatin1String("ename")).toString(),
                               content.value(QLatin1String("evalue")).toString(),
                               joinTraceback(content.value(QLatin1String("traceback")))};
        maybeComplete();
    } else if (type == QLatin1String("status") &&
               content.value(QLatin1String("execution_state")).toString() ==
                   QLatin1String("idle")) {
        job.gotIdle = true;
        maybeComplete();
    }
}

void JupyterKernelChannel::appendOutput(const QString &stream, const QString &text) {
    Job &job = *m_job;
    const bool isErr = stream == QLatin1String("stderr");
    QString &target = isErr ? job.result.stderrText : job.result.stdoutText;
    qint64 &used = isErr ? job.stderrBytes : job.stdoutBytes;
    bool &truncated = isErr ? job.result.stderrTruncated : job.result.stdoutTruncated;
    emit outputReceived(m_kernelId, isErr ? QStringLiteral("stderr") : QStringLiteral("stdout"),
                        text);
    if (job.live)
        job.live->add(isErr ? QStringLiteral("stderr") : QStringLiteral("stdout"), text);
    if (truncated)
        return;
    const QByteArray bytes = text.toUtf8();
    if (used + bytes.size() <= m_options.outputCapBytes) {
        target += text;
        used += bytes.size();
        return;
    }
    // Keep what fits (cut on a character boundary); the cut is told to the model in a note,
    // never written into what the program printed (the client's logs).
    target += QString::fromUtf8(bytes.left(m_options.outputCapBytes - used)).remove(QChar(0xFFFD));
    job.result.notes.append(QStringLiteral("[loopscope] %1 truncated at %2 bytes; the rest was "
                                           "not kept")
                                .arg(isErr ? QStringLiteral("stderr") : QStringLiteral("stdout"))
                                .arg(m_options.outputCapBytes));
    used = m_options.outputCapBytes;
    truncated = true;
}

void JupyterKernelChannel::maybeComplete() {
    if (!m_job || !m_job->gotReply || !m_job->gotIdle || m_job->restarting)
        return;
    complete(Outcome<ExecutionResult>::success(m_job->result));
}

void JupyterKernelChannel::complete(Outcome<ExecutionResult> outcome) {
    if (!m_job)
        return;
    m_runTimer->stop();
    m_graceTimer->stop();
    std::shared_ptr<Job> job = std::exchange(m_job, nullptr);
    if (outcome.ok())
        outcome.value.durationMs = double(job->elapsed.nsecsElapsed()) / 1e6;
    if (job->live)
        job->live->finish(); // every chunk before the result
    job->promise.addResult(std::move(outcome));
    job->promise.finish();
    QTimer::singleShot(0, this, &JupyterKernelChannel::pump);
}

void JupyterKernelChannel::onRunTimeout() {
    if (!m_job || m_job->timedOut)
        return;
    Job &job = *m_job;
    job.timedOut = true;
    job.result.timedOut = true;
    job.result.error = ExecutionError{
        QStringLiteral("TimeoutError"),
        QStringLiteral("code execution timed out after %1 seconds; the kernel was interrupted")
            .arg(m_options.runTimeoutMs / 1000.0),
        QString()};
    interruptKernel(m_options.interruptGraceMs);
}

void JupyterKernelChannel::restartKernel() {
    if (!m_job || !(m_job->timedOut || m_job->cancelled) || m_job->restarting)
        return;
    m_job->restarting = true;
    QNetworkRequest request(restUrl(QStringLiteral("/restart")));
    jupyterrest::authorise(request, m_token);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setTransferTimeout(qMax(m_options.requestTimeoutMs, 60000));
    QNetworkReply *reply = m_nam->post(request, QByteArrayLiteral("{}"));
    std::weak_ptr<Job> weak = m_job;
    connect(reply, &QNetworkReply::finished, this, [this, reply, weak] {
        reply->deleteLater();
        auto job = weak.lock();
        if (!job || job != m_job)
            return;
        const int status = jupyterrest::httpStatus(reply);
        if (status < 200 || status >= 300) {
            complete(Outcome<ExecutionResult>::failure(
                QStringLiteral("Jupyter kernel %1 timed out, ignored the interrupt and could not "
                               "be restarted: %2")
                    .arg(m_kernelId, jupyterrest::describeFailure(reply, reply->readAll()))));
            return;
        }
        // A fresh session on the next run: nothing of the old execution should be replayed.
        m_intentionalClose = true;
        if (m_socket)
            m_socket->abort();
        m_state = State::Disconnected;
        m_sessionId = newId();
        emit kernelRestarted(m_kernelId, job->timedOut ? QStringLiteral("timeout")
                                                       : QStringLiteral("cancelled"));
        if (job->timedOut)
            job->result.error->value =
                QStringLiteral("code execution timed out after %1 seconds; the kernel ignored "
                               "the interrupt and was restarted, so its state (variables, "
                               "imports) is lost")
                    .arg(m_options.runTimeoutMs / 1000.0);
        else
            job->result.error = ExecutionError{
                QStringLiteral("KeyboardInterrupt"),
                QStringLiteral("the run was cancelled; the kernel ignored the interrupt and was "
                               "restarted, so its state (variables, imports) is lost"),
                QString()};
        job->restarting = false;
        complete(Outcome<ExecutionResult>::success(job->result));
    });
}

void JupyterKernelChannel::shutdown(const QString &reason) {
    m_runTimer->stop();
    m_graceTimer->stop();
    m_connectTimer->stop();
    m_nudgeTimer->stop();
    m_intentionalClose = true;
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
    m_state = State::Disconnected;
    auto fail = [&reason](const std::shared_ptr<Job> &job) {
        job->promise.addResult(Outcome<ExecutionResult>::failure(reason));
        job->promise.finish();
    };
    if (m_job)
        fail(std::exchange(m_job, nullptr));
    while (!m_queue.isEmpty())
        fail(m_queue.dequeue());
}

void JupyterKernelChannel::dropConnection() {
    if (m_socket && m_state == State::Connected)
        m_socket->abort();
}

} // namespace loopscope
