#pragma once

#include "common/outcome.h"
#include "sandbox/sandboxtypes.h"

#include <QByteArray>
#include <QFuture>
#include <QJsonValue>
#include <QList>
#include <QString>

namespace loopscope {

class SandboxBackend;

// Container files for backends that only run code (Jupyter kernels, e2b's code interpreter):
// each file operation is a short Python snippet run through the backend's run(), in a namespace
// of its own (user variables stay untouched), that prints one marked JSON line. Paths are
// checked inside the sandbox too (realpath under /mnt/data).
class SandboxFileCode {
public:
    // Creates /mnt/data and makes it the current directory (run once after create()).
    static QString setupCode();
    static QString listCode();
    static QString readCode(const QString &path);
    static QString writeCode(const QString &path, const QByteArray &data);
    static QString deleteCode(const QString &path);

    // The snippet's answer: the JSON after the marker, or the error it reported.
    static Outcome<QJsonValue> parse(const ExecutionResult &result);

    // The four operations over `backend->run()`.
    static QFuture<Outcome<QList<SandboxFileInfo>>>
    list(SandboxBackend *backend, const SandboxHandle &sandbox, const SandboxParams &params);
    static QFuture<Outcome<QByteArray>> read(SandboxBackend *backend, const SandboxHandle &sandbox,
                                             const QString &path, const SandboxParams &params);
    static QFuture<Outcome<SandboxFileInfo>> write(SandboxBackend *backend,
                                                   const SandboxHandle &sandbox,
                                                   const QString &path, const QByteArray &data,
                                                   const SandboxParams &params);
    static QFuture<Outcome<bool>> remove(SandboxBackend *backend, const SandboxHandle &sandbox,
                                         const QString &path, const SandboxParams &params);
};

} // namespace loopscope
