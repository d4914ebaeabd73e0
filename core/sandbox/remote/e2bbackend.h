#pragma once

#include "sandbox/sandboxbackend.h"

#include <QHash>
#include <QUrl>

#include <functional>

class QNetworkAccessManager;
class QNetworkReply;

namespace loopscope {

// e2b's cloud sandboxes over the raw HTTP API exactly as LiteLLM speaks it (spec §4.5):
// create = POST {api_base}/sandboxes with X-API-Key; run = POST to the sandbox's port-49999
// `/execute` with X-Access-Token, answered as an NDJSON stream parsed while it arrives under the
// 10 MiB cap; delete = DELETE {api_base}/sandboxes/<id> (404 → false).
//
// Sessions outlive e2b's 300 s sandbox lifetime here: a run renews the lifetime
// (POST /sandboxes/<id>/timeout) once less than half of it is left, and a run that finds the
// sandbox gone (404/502 on /execute, confirmed by GET /sandboxes/<id> → 404) creates a
// replacement with the captured params and runs the code there. The caller is told through
// sandboxRecreated() and a "[loopscope] ... state was lost" line at the top of stderr; later
// runs and the delete of the old handle go to the replacement.
class E2bBackend : public SandboxBackend {
    Q_OBJECT
public:
    static constexpr auto kDefaultApiBase = "https://api.e2b.app";
    static constexpr auto kDefaultTemplate = "code-interpreter-v1";
    static constexpr auto kDefaultDomain = "e2b.app";
    static constexpr auto kDefaultExecuteUrlTemplate = "https://49999-{id}.{domain}/execute";
    static constexpr int kDefaultLifetimeSec = 300;

    struct Options {
        // {id} and {domain} are replaced; tests point this at a loopback stand-in.
        QString executeUrlTemplate = QString::fromLatin1(kDefaultExecuteUrlTemplate);
        QString templateId = QString::fromLatin1(kDefaultTemplate);
        int lifetimeSec = kDefaultLifetimeSec; // create's "timeout" and each renewal's
        bool allowInternetAccess = false; // LiteLLM sends true; Loopscope sandboxes get no network
        int runTimeoutMs = 30000;         // whole /execute stream; 0 = none
        int requestTimeoutMs = 30000;     // create / delete / renew / probe
        qint64 outputCapBytes = 10 * 1024 * 1024;
        // LiteLLM keeps `result` messages out of the tool output; true appends their text.
        bool includeResultsInStdout = false;
        bool renewLifetime = true;
        bool recreateExpired = true;
        qint64 liveOutputCapBytes = 256 * 1024; // live output per run (SandboxOutputCoalescer)
    };

    explicit E2bBackend(QObject *parent = nullptr);
    E2bBackend(const Options &options, QObject *parent = nullptr);
    ~E2bBackend() override;

    QString provider() const override { return QStringLiteral("e2b"); }

    QFuture<Outcome<SandboxHandle>> create(const SandboxParams &params) override;
    // `onOutput` gets the stream's stdout/stderr lines as they arrive (through a
    // SandboxOutputCoalescer), all before the future finishes.
    QFuture<Outcome<ExecutionResult>> run(const SandboxHandle &sandbox, const QString &code,
                                          const SandboxParams &params,
                                          const SandboxOutputSink &onOutput = {},
                                          const CancellationToken &cancel = {}) override;
    QFuture<Outcome<bool>> remove(const SandboxHandle &sandbox,
                                  const SandboxParams &params) override;

    // Reachable and authorised? (GET {api_base}/sandboxes with the key.) selfTest() returns
    // the last result.
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
    void setOptions(const Options &options) { m_options = options; }
    // Test seam: milliseconds since the epoch, used for lifetime renewal.
    void setClock(std::function<qint64()> nowMs);

    // The handle runs with `sandboxId` currently go to (itself unless it was recreated).
    SandboxHandle currentHandle(const SandboxHandle &sandbox) const;

signals:
    // The sandbox behind `oldId` had expired and was replaced; its state is lost.
    void sandboxRecreated(const QString &oldId, const loopscope::SandboxHandle &replacement);
    // Live output of a run while its stream is still open (stream is "stdout" or "stderr").
    void outputReceived(const QString &sandboxId, const QString &stream, const QString &text);

private:
    struct RunState;
    QUrl apiUrl(const SandboxParams &params, const SandboxHandle *handle,
                const QString &path) const;
    QString apiKeyFor(const SandboxParams &params) const; // explicit, else E2B_API_KEY
    void createWith(const QString &apiKey, const QString &apiBase,
                    std::function<void(Outcome<SandboxHandle>)> done);
    void startExecute(std::shared_ptr<RunState> state);
    void handleGone(std::shared_ptr<RunState> state, const QString &why, bool confirmed);
    void renewThenExecute(std::shared_ptr<RunState> state);

    Options m_options;
    QNetworkAccessManager *m_nam;
    std::function<qint64()> m_now;
    QHash<QString, SandboxHandle> m_replacements; // original id → live replacement
    QHash<QString, qint64> m_expiresAtMs;         // live id → estimated end of life
    SandboxSelfTest m_lastProbe;
    bool m_shuttingDown = false;
};

} // namespace loopscope
