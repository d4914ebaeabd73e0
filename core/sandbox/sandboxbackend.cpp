#include "sandbox/sandboxbackend.h"

namespace loopscope {

namespace {

template<typename T> QFuture<Outcome<T>> unsupported(const SandboxBackend *backend) {
    return QtFuture::makeReadyFuture(Outcome<T>::failure(
        QStringLiteral("the %1 sandbox provider does not support container files")
            .arg(backend->provider())));
}

} // namespace

QFuture<Outcome<QList<SandboxFileInfo>>> SandboxBackend::listFiles(const SandboxHandle &,
                                                                   const SandboxParams &) {
    return unsupported<QList<SandboxFileInfo>>(this);
}

QFuture<Outcome<QByteArray>> SandboxBackend::readFile(const SandboxHandle &, const QString &,
                                                      const SandboxParams &) {
    return unsupported<QByteArray>(this);
}

QFuture<Outcome<SandboxFileInfo>> SandboxBackend::writeFile(const SandboxHandle &, const QString &,
                                                            const QByteArray &,
                                                            const SandboxParams &) {
    return unsupported<SandboxFileInfo>(this);
}

QFuture<Outcome<bool>> SandboxBackend::deleteFile(const SandboxHandle &, const QString &,
                                                  const SandboxParams &) {
    return unsupported<bool>(this);
}

} // namespace loopscope
