#pragma once

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace loopscope::test {

// A real Debian `jupyter-server` on a free loopback port with a random token, its config,
// data and runtime directories inside a temporary directory so kernels are recognisable by
// their connection-file path. stop() terminates the server (which shuts its kernels down) and
// then makes sure no process of ours refers to that directory any more.
class JupyterServerProcess {
public:
    static constexpr auto kBinary = "/usr/bin/jupyter-server";

    JupyterServerProcess();
    ~JupyterServerProcess();

    static bool isInstalled();
    // Starts and waits until GET /api answers (false + error() on failure).
    bool start(int timeoutMs = 60000);
    // Terminates the server; false when it had to be killed.
    bool stop();
    // Last resort (destructor): SIGKILL any of our kernels still alive after the server went.
    void killLeftovers();

    QString baseUrl() const;
    QString token() const { return m_token; }
    QString error() const { return m_error; }
    QString log() const;
    // Processes (other than the server) whose command line mentions our temporary directory
    // (the kernels we started), or only the kernel `kernelId`.
    QList<qint64> kernelProcesses(const QString &kernelId = {}) const;

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QProcess m_process;
    quint16 m_port = 0;
    QString m_token;
    QString m_error;
};

} // namespace loopscope::test
