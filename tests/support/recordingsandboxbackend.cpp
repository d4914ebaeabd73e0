#include "support/recordingsandboxbackend.h"

#include <algorithm>

namespace loopscope {

RecordingSandboxBackend::RecordingSandboxBackend(QObject *parent)
    : SandboxBackend(parent) {}

RecordingSandboxBackend::~RecordingSandboxBackend() {
    // Unfinished promises would leave waiters hanging; fail them instead.
    for (const auto &promise : m_pending) {
        promise->addResult(
            Outcome<SandboxHandle>::failure(QStringLiteral("test backend destroyed")));
        promise->finish();
    }
    for (const PendingRun &run : m_pendingRuns) {
        run.promise->addResult(
            Outcome<ExecutionResult>::failure(QStringLiteral("test backend destroyed")));
        run.promise->finish();
    }
}

Outcome<SandboxHandle> RecordingSandboxBackend::makeCreateOutcome() {
    if (failCreate)
        return Outcome<SandboxHandle>::failure(createError);
    SandboxHandle handle;
    handle.id = uniqueIds ? handleId + u'_' + QString::number(++m_nextId) : handleId;
    handle.provider = providerName;
    liveIds.insert(handle.id);
    return Outcome<SandboxHandle>::success(handle);
}

QFuture<Outcome<SandboxHandle>> RecordingSandboxBackend::create(const SandboxParams &params) {
    createCalls.append({params});
    if (deferCreates) {
        auto promise = std::make_shared<QPromise<Outcome<SandboxHandle>>>();
        promise->start();
        m_pending.push_back(promise);
        return promise->future();
    }
    return QtFuture::makeReadyFuture(makeCreateOutcome());
}

int RecordingSandboxBackend::completePendingCreates() {
    // Swap first: finishing a promise may run code that creates again.
    auto pending = std::move(m_pending);
    m_pending.clear();
    for (const auto &promise : pending) {
        promise->addResult(makeCreateOutcome());
        promise->finish();
    }
    return int(pending.size());
}

Outcome<ExecutionResult> RecordingSandboxBackend::makeRunOutcome(const SandboxHandle &sandbox) {
    if (failRun)
        return Outcome<ExecutionResult>::failure(runError);
    ExecutionResult result;
    result.stdoutText = stdoutText;
    result.stderrText = stderrText;
    result.error = executionError;
    result.executionCount = ++m_runsPerSandbox[sandbox.id];
    return Outcome<ExecutionResult>::success(result);
}

QFuture<Outcome<ExecutionResult>> RecordingSandboxBackend::run(const SandboxHandle &sandbox,
                                                               const QString &code,
                                                               const SandboxParams &params,
                                                               const SandboxOutputSink &onOutput,
                                                               const CancellationToken &cancel) {
    runCalls.append({sandbox, code, params});
    if (deferRuns) {
        auto promise = std::make_shared<QPromise<Outcome<ExecutionResult>>>();
        promise->start();
        m_pendingRuns.push_back({sandbox, promise, onOutput});
        if (cancel) {
            // As an interrupted Python run: what it printed so far, then KeyboardInterrupt.
            const QPointer<RecordingSandboxBackend> self(this);
            cancel->onCancel([self, promise] {
                if (!self)
                    return;
                auto &runs = self->m_pendingRuns;
                const auto it = std::find_if(runs.begin(), runs.end(), [&](const PendingRun &r) {
                    return r.promise == promise;
                });
                if (it == runs.end())
                    return;
                const PendingRun run = *it;
                runs.erase(it);
                ++self->cancelledRuns;
                Outcome<ExecutionResult> outcome = self->makeRunOutcome(run.handle);
                if (outcome.ok())
                    outcome.value.error =
                        ExecutionError{QStringLiteral("KeyboardInterrupt"), QString(), QString()};
                self->deliverOutput(outcome, run.onOutput);
                run.promise->addResult(outcome);
                run.promise->finish();
            });
        }
        return promise->future();
    }
    const Outcome<ExecutionResult> outcome = makeRunOutcome(sandbox);
    deliverOutput(outcome, onOutput);
    return QtFuture::makeReadyFuture(outcome);
}

void RecordingSandboxBackend::deliverOutput(const Outcome<ExecutionResult> &outcome,
                                            const SandboxOutputSink &onOutput) {
    if (!onOutput || !outcome.ok())
        return;
    if (!outcome.value.stdoutText.isEmpty())
        onOutput(QStringLiteral("stdout"), outcome.value.stdoutText);
    if (!outcome.value.stderrText.isEmpty())
        onOutput(QStringLiteral("stderr"), outcome.value.stderrText);
}

int RecordingSandboxBackend::completePendingRuns() {
    auto pending = std::move(m_pendingRuns);
    m_pendingRuns.clear();
    for (const PendingRun &run : pending) {
        const Outcome<ExecutionResult> outcome = makeRunOutcome(run.handle);
        deliverOutput(outcome, run.onOutput);
        run.promise->addResult(outcome);
        run.promise->finish();
    }
    return int(pending.size());
}

QFuture<Outcome<bool>> RecordingSandboxBackend::remove(const SandboxHandle &sandbox,
                                                       const SandboxParams &params) {
    removeCalls.append({sandbox, params});
    if (failRemove)
        return QtFuture::makeReadyFuture(Outcome<bool>::failure(removeError));
    const bool existed = liveIds.remove(sandbox.id);
    return QtFuture::makeReadyFuture(Outcome<bool>::success(existed));
}

SandboxSelfTest RecordingSandboxBackend::selfTest() const {
    SandboxSelfTest result;
    result.available = true;
    return result;
}

SandboxFactory RecordingSandboxBackend::factory(std::optional<SandboxParams> params) {
    QPointer<RecordingSandboxBackend> self(this);
    return [self, params]() -> QFuture<Outcome<SandboxEntry>> {
        if (!self)
            return QtFuture::makeReadyFuture(
                Outcome<SandboxEntry>::failure(QStringLiteral("test backend destroyed")));
        // Synchronous continuation: the handle future finishes on this thread, and a context
        // object would not outlive a destroyed backend safely in Qt 6.4.
        return self->create(params.value_or(SandboxParams{}))
            .then([self, params](const Outcome<SandboxHandle> &created) {
                if (!created.ok())
                    return Outcome<SandboxEntry>::failure(created.error);
                SandboxEntry entry;
                entry.handle = created.value;
                entry.params = params;
                entry.backend = self.data();
                return Outcome<SandboxEntry>::success(entry);
            });
    };
}

} // namespace loopscope
