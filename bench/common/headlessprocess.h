#pragma once

// A real `loopscope --headless` process for the benchmarks that measure the shipped binary as a
// whole (several builds side by side): each start gets a free port and an empty HOME/XDG tree of
// its own, so no run reads or writes the user's settings or history.

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QThread>

#include <functional>
#include <memory>

#include <csignal>

namespace loopscope::bench {

// Polls `condition` with the event loop running until it holds (true) or `timeoutMs` passes.
inline bool pollUntil(const std::function<bool()> &condition, int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (!condition()) {
        if (clock.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        QThread::usleep(1000);
    }
    return true;
}

// A loopback port free right now (0 when none is).
inline quint16 freeLoopbackPort() {
    QTcpServer probe;
    return probe.listen(QHostAddress::LocalHost, 0) ? probe.serverPort() : 0;
}

class HeadlessProcess {
public:
    HeadlessProcess(const QString &path, const QString &upstream,
                    const QStringList &extraArguments = {})
        : m_path(path)
        , m_upstream(upstream)
        , m_extraArguments(extraArguments) {}
    ~HeadlessProcess() { stop(); }
    HeadlessProcess(const HeadlessProcess &) = delete;
    HeadlessProcess &operator=(const HeadlessProcess &) = delete;

    // Starts the binary and waits until it accepts connections; the reason when it does not.
    QString start() {
        if (!m_home.isValid())
            return QStringLiteral("no temporary directory");
        m_port = freeLoopbackPort();
        if (m_port == 0)
            return QStringLiteral("no free port");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("HOME"), m_home.path());
        for (const char *xdg :
             {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"})
            env.insert(QString::fromLatin1(xdg), m_home.path() + u'/' + QString::fromLatin1(xdg));
        m_process = std::make_unique<QProcess>();
        m_process->setProcessEnvironment(env);
        m_process->setProgram(m_path);
        m_process->setArguments(QStringList{QStringLiteral("--headless"), QStringLiteral("--port"),
                                            QString::number(m_port), QStringLiteral("--upstream"),
                                            m_upstream} +
                                m_extraArguments);
        m_process->setStandardOutputFile(QProcess::nullDevice());
        m_process->setStandardErrorFile(QProcess::nullDevice());
        m_process->start();
        if (!m_process->waitForStarted(10000))
            return QStringLiteral("cannot start ") + m_path;
        const bool listening = pollUntil(
            [this] {
                QTcpSocket probe;
                probe.connectToHost(QStringLiteral("127.0.0.1"), m_port);
                return probe.waitForConnected(200);
            },
            30000);
        return listening ? QString() : m_path + QStringLiteral(" did not listen");
    }

    // SIGTERM (the orderly shutdown a user's Ctrl+C gives), SIGKILL if that takes over 30 s.
    void stop() {
        if (!m_process)
            return;
        ::kill(static_cast<pid_t>(m_process->processId()), SIGTERM);
        if (!m_process->waitForFinished(30000)) {
            m_process->kill();
            m_process->waitForFinished(5000);
        }
        m_process.reset();
    }

    qint64 pid() const { return m_process ? m_process->processId() : 0; }
    quint16 port() const { return m_port; }

private:
    QString m_path;
    QString m_upstream;
    QStringList m_extraArguments;
    QTemporaryDir m_home;
    quint16 m_port = 0;
    std::unique_ptr<QProcess> m_process;
};

} // namespace loopscope::bench
