#pragma once

#include <QMetaType>
#include <QString>
#include <QVariantMap>

#include <optional>

namespace loopscope {

// Provider settings captured when a sandbox is created and reused for every later run and
// delete (LiteLLM's "params"): a sandbox is never re-resolved against a reloaded config.
struct SandboxParams {
    QString provider; // "local", "e2b", "jupyter", ...
    QString apiKey;   // secret: never logged unmasked
    QString apiBase;

    friend bool operator==(const SandboxParams &, const SandboxParams &) = default;
};

// What a backend hands back from create(): its own id plus whatever it needs later.
struct SandboxHandle {
    QString id;          // backend sandbox id; OpenAI's container_id is derived from it
    QString provider;    // backend that owns it
    QVariantMap details; // backend-private data (tokens, domain, work dir, ...)

    bool isValid() const { return !id.isEmpty(); }
    friend bool operator==(const SandboxHandle &, const SandboxHandle &) = default;
};

// An uncaught exception in user code (not an infrastructure failure).
struct ExecutionError {
    QString name;  // e.g. "ZeroDivisionError", "TimeoutError"
    QString value; // e.g. "division by zero"
    QString traceback;

    friend bool operator==(const ExecutionError &, const ExecutionError &) = default;
};

// One run of code in a sandbox. Infrastructure failures (crashed interpreter, unreachable
// service) are reported by Outcome::error instead; this is what the code itself produced.
struct ExecutionResult {
    QString stdoutText;
    QString stderrText;
    std::optional<ExecutionError> error;
    int executionCount = 0; // 1-based count of runs in this sandbox, 0 when unknown
    double durationMs = 0.0;
    bool stdoutTruncated = false;
    bool stderrTruncated = false;
    bool timedOut = false;
};

} // namespace loopscope

Q_DECLARE_METATYPE(loopscope::SandboxHandle)
Q_DECLARE_METATYPE(loopscope::ExecutionResult)
