#pragma once

#include "sandbox/remote/jupyterkernelchannel.h"
#include "sandbox/sandboxbackend.h"

#include <QHash>
#include <QPointer>

class QNetworkAccessManager;

namespace loopscope {

// Kernels on a Jupyter Server or Jupyter Enterprise Gateway (same REST + WebSocket API):
// create = POST {api_base}/api/kernels {"name": kernel} (see Options::kernelName), run =
// execute_request over the kernel's WebSocket (see JupyterKernelChannel), delete = DELETE
// {api_base}/api/kernels/<id> (404 → false). api_key is the server token, sent as `Authorization:
// token <key>` (JUPYTER_TOKEN from the environment when empty).
//
// Output: `stream` text goes to stdout/stderr; the text/plain form of `execute_result` and
// `display_data` is appended to stdout as a notebook would show it
// (Options::includeResultsInStdout; LiteLLM's e2b path drops such results, the local backend has
// none). Tracebacks lose their ANSI colours. A run past its timeout returns timedOut with a
// TimeoutError after an interrupt (state kept) or, when the kernel ignores the interrupt, a restart
// (state lost; kernelRestarted()).
class JupyterBackend : public SandboxBackend {
    Q_OBJECT
public:
    struct Options {
        // Empty: the server's default kernel ("python3" on a plain Jupyter Server,
        // kernel.defaultKernelName on Enterprise Gateway). `?kernel_name=NAME` on api_base
        // overrides it per sandbox_tools entry.
        QString kernelName;
        JupyterKernelChannel::Options channel;
    };

    explicit JupyterBackend(QObject *parent = nullptr);
    JupyterBackend(const Options &options, QObject *parent = nullptr);
    ~JupyterBackend() override;

    QString provider() const override { return QStringLiteral("jupyter"); }

    QFuture<Outcome<SandboxHandle>> create(const SandboxParams &params) override;
    QFuture<Outcome<ExecutionResult>> run(const SandboxHandle &sandbox, const QString &code,
                                          const SandboxParams &params,
                                          const SandboxOutputSink &onOutput = {},
                                          const CancellationToken &cancel = {}) override;
    QFuture<Outcome<bool>> remove(const SandboxHandle &sandbox,
                                  const SandboxParams &params) override;

    // Reachable (GET /api)? Authorised and offering the kernel (GET /api/kernelspecs)?
    // selfTest() returns the last result.
    QFuture<SandboxSelfTest> probe(const SandboxParams &params);
    SandboxSelfTest selfTest() const override;

    // Container files through short Python snippets (SandboxFileCode).
    QFuture<Outcome<QList<SandboxFileInfo>>> listFiles(const SandboxHandle &sandbox,
                                                       const SandboxParams &params) override;
    QFuture<Outcome<QByteArray>> readFile(const SandboxHandle &sandbox, const QString &path,
                                          const SandboxParams &params) override;
    QFuture<Outcome<SandboxFileInfo>> writeFile(const SandboxHandle &sandbox, const QString &path,
                                                const QByteArray &data,
                                                const SandboxParams &params) override;
    QFuture<Outcome<bool>> deleteFile(const SandboxHandle &sandbox, const QString &path,
                                      const SandboxParams &params) override;

    const Options &options() const { return m_options; }

    // Test seam: drop a kernel's WebSocket as a network failure would (false: none open).
    bool dropConnection(const QString &kernelId);

signals:
    void outputReceived(const QString &kernelId, const QString &stream, const QString &text);
    void kernelRestarted(const QString &kernelId, const QString &reason);

private:
    QString tokenFor(const SandboxParams &params) const;
    QString kernelFor(const SandboxParams &params) const;
    QString baseFor(const SandboxParams &params, const SandboxHandle *handle) const;
    JupyterKernelChannel *channelFor(const SandboxHandle &sandbox, const QString &base,
                                     const QString &token);

    Options m_options;
    QNetworkAccessManager *m_nam;
    QHash<QString, QPointer<JupyterKernelChannel>> m_channels;
    SandboxSelfTest m_lastProbe;
};

} // namespace loopscope
