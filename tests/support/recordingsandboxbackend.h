#pragma once

#include "sandbox/sandboxbackend.h"
#include "sandbox/sandboxregistry.h"

#include <QList>
#include <QPointer>
#include <QPromise>
#include <QSet>

#include <memory>
#include <optional>
#include <vector>

namespace loopscope {

// A SandboxBackend for tests that stands in for what lives outside this machine (e.g. e2b): it
// runs nothing, records every call in public lists, and fails on demand. Futures are ready at
// once unless `deferCreates` is set, in which case create() stays pending until
// completePendingCreates() (to make two getOrCreate calls race for one key).
class RecordingSandboxBackend : public SandboxBackend {
    Q_OBJECT
public:
    struct CreateCall {
        SandboxParams params;
    };
    struct RunCall {
        SandboxHandle handle;
        QString code;
        SandboxParams params;
    };
    struct RemoveCall {
        SandboxHandle handle;
        SandboxParams params;
    };

    explicit RecordingSandboxBackend(QObject *parent = nullptr);
    ~RecordingSandboxBackend() override;

    // --- configuration (public on purpose: tests flip these between calls) ---
    QString providerName = QStringLiteral("fake");
    QString handleId = QStringLiteral("sbx_fake"); // id of every created handle...
    bool uniqueIds = false;                        // ...unless set: "sbx_fake_1", "sbx_fake_2", ...
    QString stdoutText = QStringLiteral("42");
    QString stderrText;
    std::optional<ExecutionError> executionError; // the code "raised" this
    bool failCreate = false;
    QString createError = QStringLiteral("sandbox create failed");
    bool failRun = false; // infrastructure failure (Outcome error), not an ExecutionError
    QString runError = QStringLiteral("sandbox interpreter crashed");
    bool failRemove = false;
    QString removeError = QStringLiteral("e2b unreachable");
    bool deferCreates = false;
    bool deferRuns = false; // run() stays pending until completePendingRuns()
    // Deferred runs finished by their cancellation token (stdoutText, then KeyboardInterrupt).
    int cancelledRuns = 0;

    // --- what happened ---
    QList<CreateCall> createCalls;
    QList<RunCall> runCalls;
    QList<RemoveCall> removeCalls;
    QSet<QString> liveIds; // created and not yet removed

    int createCount() const { return int(createCalls.size()); }
    int runCount() const { return int(runCalls.size()); }
    int removeCount() const { return int(removeCalls.size()); }

    // Deferred mode: creates still waiting, and finishing them (honouring failCreate at that time).
    int pendingCreateCount() const { return int(m_pending.size()); }
    int completePendingCreates();
    int pendingRunCount() const { return int(m_pendingRuns.size()); }
    int completePendingRuns(); // honours failRun / stdoutText / executionError at that time

    // A factory for SandboxRegistry::getOrCreate that creates through this backend and captures
    // `params` (nullopt mimics an injected sandbox_config).
    SandboxFactory factory(std::optional<SandboxParams> params = SandboxParams{
                               QStringLiteral("fake"), QString(), QString()});

    // SandboxBackend
    QString provider() const override { return providerName; }
    QFuture<Outcome<SandboxHandle>> create(const SandboxParams &params) override;
    // Delivers stdoutText / stderrText to `onOutput` as one chunk each before the run finishes.
    QFuture<Outcome<ExecutionResult>> run(const SandboxHandle &sandbox, const QString &code,
                                          const SandboxParams &params,
                                          const SandboxOutputSink &onOutput = {},
                                          const CancellationToken &cancel = {}) override;
    QFuture<Outcome<bool>> remove(const SandboxHandle &sandbox,
                                  const SandboxParams &params) override;
    SandboxSelfTest selfTest() const override;

private:
    Outcome<SandboxHandle> makeCreateOutcome();
    Outcome<ExecutionResult> makeRunOutcome(const SandboxHandle &sandbox);

    std::vector<std::shared_ptr<QPromise<Outcome<SandboxHandle>>>> m_pending;
    struct PendingRun {
        SandboxHandle handle;
        std::shared_ptr<QPromise<Outcome<ExecutionResult>>> promise;
        SandboxOutputSink onOutput;
    };
    void deliverOutput(const Outcome<ExecutionResult> &outcome, const SandboxOutputSink &onOutput);
    std::vector<PendingRun> m_pendingRuns;
    int m_nextId = 0;
    QHash<QString, int> m_runsPerSandbox;
};

} // namespace loopscope
