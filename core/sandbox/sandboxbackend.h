#pragma once

#include "common/cancellation.h"
#include "common/outcome.h"
#include "sandbox/sandboxtypes.h"

#include <QFuture>
#include <QObject>
#include <QStringList>

#include <functional>

namespace loopscope {

// Whether a backend can serve requests on this machine, and if not, exactly what is missing.
struct SandboxSelfTest {
    bool available = false;
    QStringList problems; // each names what is missing and the Debian package that fixes it
    QStringList warnings; // notes for the log, e.g. "running as root: sandboxes run as uid …"
    // False when code runs without isolation (allowUnisolated): the window and the log must
    // flag it loudly, not just note it.
    bool isolated = true;
    // Data-analysis libraries user code can import, "numpy 1.24.2"; missing ones are named in
    // warnings with their Debian package.
    QStringList libraries;
};

// Receives a run's output while the code runs: `stream` is "stdout" or "stderr", `text` a chunk
// as the code printed it (coalesced and bounded by the backend). Called on the backend's thread,
// always before the run's future finishes; the final ExecutionResult still holds all the output.
using SandboxOutputSink = std::function<void(const QString &stream, const QString &text)>;

// Asynchronous create / run / delete of sandboxes. Futures finish on the backend's thread;
// callers attach continuations with QFuture::then(context, ...). Failures are Outcome errors,
// never exceptions. A backend lives on the proxy thread, owned by its parent.
class SandboxBackend : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    ~SandboxBackend() override = default;

    // Provider name as used in sandbox_tools (`litellm_params.sandbox_provider`).
    virtual QString provider() const = 0;

    virtual QFuture<Outcome<SandboxHandle>> create(const SandboxParams &params) = 0;
    // `onOutput` (may be empty) gets live chunks of the run's stdout/stderr. `cancel` (may be
    // null) stops this run (the client went away): one still queued finishes at once with
    // kRunCancelled; one in flight is interrupted (KeyboardInterrupt in Python) and finishes
    // with its output so far, the sandbox keeping its state; code that does not stop within
    // kInterruptGraceMs loses its interpreter instead (as on a timeout). A backend that cannot
    // interrupt ignores it (e2b): the run goes on to its end or timeout.
    virtual QFuture<Outcome<ExecutionResult>> run(const SandboxHandle &sandbox, const QString &code,
                                                  const SandboxParams &params,
                                                  const SandboxOutputSink &onOutput = {},
                                                  const CancellationToken &cancel = {}) = 0;
    // How long interrupted code may take to stop before its interpreter is killed: short, so a
    // hang-up frees the CPU within a second.
    static constexpr int kInterruptGraceMs = 500;
    // What a run cancelled before it started fails with.
    static inline const QString kRunCancelled = QStringLiteral("the run was cancelled");
    // Resolves to true when something was deleted, false when it was already gone.
    virtual QFuture<Outcome<bool>> remove(const SandboxHandle &sandbox,
                                          const SandboxParams &params) = 0;

    virtual SandboxSelfTest selfTest() const = 0;

    // Files under /mnt/data (sandboxDataDir()), the container's files. `path` is absolute and
    // must lie under /mnt/data. The defaults fail ("files are not supported"): the local, e2b
    // and Jupyter backends override them.
    virtual QFuture<Outcome<QList<SandboxFileInfo>>> listFiles(const SandboxHandle &sandbox,
                                                               const SandboxParams &params);
    virtual QFuture<Outcome<QByteArray>> readFile(const SandboxHandle &sandbox, const QString &path,
                                                  const SandboxParams &params);
    virtual QFuture<Outcome<SandboxFileInfo>> writeFile(const SandboxHandle &sandbox,
                                                        const QString &path, const QByteArray &data,
                                                        const SandboxParams &params);
    virtual QFuture<Outcome<bool>> deleteFile(const SandboxHandle &sandbox, const QString &path,
                                              const SandboxParams &params);
};

} // namespace loopscope
