#pragma once

#include <QByteArray>
#include <QList>
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
// A picture the code showed or left open (a matplotlib figure, PIL's show(), a notebook's
// display_data), in the order produced. Already within the per-image cap.
struct SandboxImage {
    QString name;     // e.g. "figure-1.png": how the model and the window refer to it
    QString mimeType; // "image/png"
    QByteArray data;

    friend bool operator==(const SandboxImage &, const SandboxImage &) = default;
};

// One regular file under the sandbox's /mnt/data.
struct SandboxFileInfo {
    QString path; // absolute, as the code sees it: "/mnt/data/report.csv"
    qint64 bytes = 0;
    qint64 modifiedMs = 0; // modification time, ms since the epoch (0 when unknown)

    friend bool operator==(const SandboxFileInfo &, const SandboxFileInfo &) = default;
};

// OpenAI's working directory for files, in every sandbox; also the code's current directory.
inline QString sandboxDataDir() {
    return QStringLiteral("/mnt/data");
}

// Per-run image caps (OpenAI-like defaults); images beyond them become a note for the model.
struct SandboxImageLimits {
    static constexpr qint64 kMaxImageBytes = 4 * 1024 * 1024;
    static constexpr int kMaxImagesPerRun = 8;
};

struct ExecutionResult {
    QString stdoutText;
    QString stderrText;
    std::optional<ExecutionError> error;
    int executionCount = 0; // 1-based count of runs in this sandbox, 0 when unknown
    double durationMs = 0.0;
    bool stdoutTruncated = false;
    bool stderrTruncated = false;
    bool timedOut = false;
    QList<SandboxImage> images; // within SandboxImageLimits; the rest is noted in notes
    int imagesProduced = 0;     // including those left out for the caps
    // Lines for the model only (an image left out, a figure that failed to render): the client's
    // logs are stdoutText, exactly what the program printed.
    QStringList notes;
};

// Adds a PNG a remote backend reported (Jupyter display_data, e2b png results) within
// SandboxImageLimits, or a note for the model saying why it was left out.
inline void appendSandboxImage(ExecutionResult &result, const QByteArray &png) {
    const QString name = QStringLiteral("image-%1.png").arg(++result.imagesProduced);
    if (result.images.size() >= SandboxImageLimits::kMaxImagesPerRun) {
        result.notes.append(QStringLiteral("[loopscope] %1 not returned: a run returns at most %2 "
                                           "images")
                                .arg(name)
                                .arg(SandboxImageLimits::kMaxImagesPerRun));
    } else if (png.size() > SandboxImageLimits::kMaxImageBytes) {
        result.notes.append(QStringLiteral("[loopscope] %1 not returned: it has %2 bytes; the "
                                           "limit is %3 bytes per image")
                                .arg(name)
                                .arg(png.size())
                                .arg(SandboxImageLimits::kMaxImageBytes));
    } else {
        result.images.append(SandboxImage{name, QStringLiteral("image/png"), png});
    }
}

} // namespace loopscope

Q_DECLARE_METATYPE(loopscope::SandboxHandle)
Q_DECLARE_METATYPE(loopscope::ExecutionResult)
