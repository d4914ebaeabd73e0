#include "jupyterserverprocess.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTcpServer>
#include <QThread>
#include <QUuid>

#include <csignal>
#include <sys/types.h>

namespace loopscope::test {

JupyterServerProcess::JupyterServerProcess() = default;

JupyterServerProcess::~JupyterServerProcess() {
    stop();
    killLeftovers();
}

bool JupyterServerProcess::isInstalled() {
    return QFileInfo(QString::fromLatin1(kBinary)).isExecutable();
}

QString JupyterServerProcess::baseUrl() const {
    return QStringLiteral("http://127.0.0.1:%1").arg(m_port);
}

QString JupyterServerProcess::log() const {
    if (!m_dir)
        return {};
    QFile file(m_dir->filePath(QStringLiteral("server.log")));
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll().right(4000))
                                          : QString();
}

bool JupyterServerProcess::start(int timeoutMs) {
    m_dir = std::make_unique<QTemporaryDir>(QDir::tempPath() +
                                            QStringLiteral("/loopscope-jupyter-XXXXXX"));
    if (!m_dir->isValid()) {
        m_error = QStringLiteral("cannot create a temporary directory");
        return false;
    }
    {
        QTcpServer probe; // a free port; the tiny race with other processes is acceptable here
        probe.listen(QHostAddress::LocalHost, 0);
        m_port = probe.serverPort();
    }
    m_token = QUuid::createUuid().toString(QUuid::Id128);
    const QString root = m_dir->filePath(QStringLiteral("root"));
    QDir().mkpath(root);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("JUPYTER_RUNTIME_DIR"), m_dir->filePath(QStringLiteral("runtime")));
    env.insert(QStringLiteral("JUPYTER_CONFIG_DIR"), m_dir->filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("JUPYTER_DATA_DIR"), m_dir->filePath(QStringLiteral("data")));
    env.insert(QStringLiteral("IPYTHONDIR"), m_dir->filePath(QStringLiteral("ipython")));
    env.remove(QStringLiteral("JUPYTER_TOKEN"));
    m_process.setProcessEnvironment(env);
    m_process.setStandardOutputFile(m_dir->filePath(QStringLiteral("server.log")));
    m_process.setStandardErrorFile(m_dir->filePath(QStringLiteral("server.log")),
                                   QIODevice::Append);
    m_process.start(QString::fromLatin1(kBinary),
                    {QStringLiteral("--allow-root"), QStringLiteral("--no-browser"),
                     QStringLiteral("--ServerApp.port=%1").arg(m_port),
                     QStringLiteral("--ServerApp.port_retries=0"),
                     QStringLiteral("--ServerApp.ip=127.0.0.1"),
                     QStringLiteral("--ServerApp.token=%1").arg(m_token),
                     QStringLiteral("--ServerApp.root_dir=%1").arg(root)});
    if (!m_process.waitForStarted(10000)) {
        m_error = QStringLiteral("cannot start %1: %2")
                      .arg(QString::fromLatin1(kBinary), m_process.errorString());
        return false;
    }
    QNetworkAccessManager nam;
    const QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (m_process.state() != QProcess::Running) {
            m_error = QStringLiteral("jupyter-server exited early: ") + log();
            return false;
        }
        QNetworkReply *reply = nam.get(QNetworkRequest(QUrl(baseUrl() + QStringLiteral("/api"))));
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        const bool up = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 200;
        reply->deleteLater();
        if (up)
            return true;
        QThread::msleep(100);
    }
    m_error = QStringLiteral("jupyter-server did not answer /api within %1 ms: %2")
                  .arg(timeoutMs)
                  .arg(log());
    return false;
}

QList<qint64> JupyterServerProcess::kernelProcesses(const QString &kernelId) const {
    QList<qint64> pids;
    if (!m_dir)
        return pids;
    const QByteArray marker = kernelId.isEmpty() ? m_dir->path().toUtf8()
                                                 : (QStringLiteral("kernel-") + kernelId).toUtf8();
    const qint64 self = m_process.processId();
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &entry : entries) {
        bool ok = false;
        const qint64 pid = entry.toLongLong(&ok);
        if (!ok || pid == self)
            continue;
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains(marker))
            pids.append(pid);
    }
    return pids;
}

bool JupyterServerProcess::stop() {
    bool clean = true;
    if (m_process.state() != QProcess::NotRunning) {
        // SIGTERM: jupyter-server shuts its kernels down before exiting.
        m_process.terminate();
        if (!m_process.waitForFinished(20000)) {
            clean = false;
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }
    return clean;
}

void JupyterServerProcess::killLeftovers() {
    // Anything still running from our runtime dir is a kernel we started: end it by pid.
    for (int round = 0; round < 50; ++round) {
        const QList<qint64> left = kernelProcesses();
        if (left.isEmpty())
            break;
        if (round >= 20)
            for (qint64 pid : left)
                ::kill(pid_t(pid), SIGKILL);
        QThread::msleep(100);
    }
}

} // namespace loopscope::test
