#pragma once

#include "common/outcome.h"
#include "sandbox/sandboxbackend.h"
#include "sandbox/sandboxtypes.h"

#include <QElapsedTimer>
#include <QFuture>
#include <QJsonObject>
#include <QObject>
#include <QPromise>
#include <QQueue>
#include <QUrl>

#include <memory>

class QNetworkAccessManager;
class QTimer;
class QWebSocket;

namespace loopscope {

class SandboxOutputCoalescer;

// One kernel's WebSocket (`/api/kernels/<id>/channels`, Jupyter messaging protocol 5.3 as JSON
// text frames) and the runs queued on it, one at a time: a run sends an `execute_request` and
// completes when BOTH the shell `execute_reply` and the iopub `status: idle` for its msg_id have
// arrived (either order). A run that outlives its timeout interrupts the kernel over REST and,
// if the kernel does not come back within the grace period, restarts it. A socket that drops
// mid-run is reopened with the same session id, so Jupyter Server replays what it buffered.
class JupyterKernelChannel : public QObject {
    Q_OBJECT
public:
    struct Options {
        int runTimeoutMs = 30000;
        int interruptGraceMs = 5000; // after a timeout's or a cancel's interrupt
        int connectTimeoutMs = 30000;
        int requestTimeoutMs = 30000;
        int reconnectAttempts = 3;
        qint64 outputCapBytes = 1024 * 1024; // per stream
        bool includeResultsInStdout = true;
        qint64 liveOutputCapBytes = 256 * 1024; // per run, see SandboxOutputCoalescer
    };

    JupyterKernelChannel(QNetworkAccessManager *nam, const QString &apiBase, const QString &token,
                         const QString &kernelId, const Options &options,
                         QObject *parent = nullptr);
    ~JupyterKernelChannel() override;

    // `onOutput` gets the run's `stream` messages as they arrive (through a
    // SandboxOutputCoalescer), all before the future finishes.
    // `cancel` (may be null): a queued run fails with SandboxBackend::kRunCancelled, a running
    // one interrupts the kernel (it finishes with KeyboardInterrupt and its output so far, the
    // kernel's state kept) and, if the kernel has not stopped it within
    // SandboxBackend::kInterruptGraceMs, restarts the kernel.
    QFuture<Outcome<ExecutionResult>> execute(const QString &code,
                                              const SandboxOutputSink &onOutput = {},
                                              const CancellationToken &cancel = {});
    void setToken(const QString &token) { m_token = token; }
    // Fails queued and running work with `reason` and closes the socket (kernel deleted).
    void shutdown(const QString &reason);
    // Test seam: drop the socket the way a network failure would.
    void dropConnection();
    bool isConnected() const { return m_state == State::Connected; }
    QString sessionId() const { return m_sessionId; }

signals:
    void outputReceived(const QString &kernelId, const QString &stream, const QString &text);
    // The kernel restarted (`reason`: "timeout" or "cancelled" after a failed interrupt, or
    // "died").
    void kernelRestarted(const QString &kernelId, const QString &reason);

private:
    enum class State { Disconnected, Connecting, Connected };
    struct Job {
        QString code;
        QPromise<Outcome<ExecutionResult>> promise;
        QString msgId;
        ExecutionResult result;
        qint64 stdoutBytes = 0;
        qint64 stderrBytes = 0;
        bool sent = false;
        bool gotReply = false;
        bool gotIdle = false;
        bool timedOut = false;
        bool cancelled = false; // interrupted because its caller went away
        bool restarting = false;
        int resends = 0; // after an "aborted" execute_reply
        QElapsedTimer elapsed;
        std::shared_ptr<SandboxOutputCoalescer> live; // null without a sink
    };

    void pump();
    void openSocket();
    void onConnected();
    void onDisconnected();
    void onMessage(const QString &text);
    void send();
    QString sendShell(const QString &msgType, const QJsonObject &content);
    void nudgeAgain();
    void appendOutput(const QString &stream, const QString &text);
    void maybeComplete();
    void complete(Outcome<ExecutionResult> outcome);
    void onRunTimeout();
    void cancel(const std::shared_ptr<Job> &job);
    void interruptKernel(int graceMs);
    void restartKernel();
    void diagnoseAndFail(const QString &socketError);
    QUrl restUrl(const QString &suffix) const;
    QString masked() const;

    QNetworkAccessManager *m_nam;
    QString m_apiBase;
    QString m_token;
    QString m_kernelId;
    Options m_options;
    QString m_sessionId;
    QWebSocket *m_socket = nullptr;
    State m_state = State::Disconnected;
    bool m_intentionalClose = false;
    int m_reconnects = 0;
    QQueue<std::shared_ptr<Job>> m_queue;
    std::shared_ptr<Job> m_job;
    QTimer *m_runTimer;
    QTimer *m_graceTimer;
    QTimer *m_connectTimer;
    QTimer *m_nudgeTimer;
    bool m_needsNudge = false;
    int m_nudgeTries = 0;
    QStringList m_nudgeIds;
};

} // namespace loopscope
