#include "sandbox/local/sandboxdriverpayload.h"

#include <QFile>
#include <QHash>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMutex>
#include <QProcess>
#include <QtEndian>

static void initSandboxResources() {
    Q_INIT_RESOURCE(loopscope_sandbox_driver);
}

namespace loopscope {

Q_DECLARE_LOGGING_CATEGORY(lcLocalSandbox)

namespace {

QByteArray resource(const QString &path) {
    initSandboxResources();
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("%s missing from the resources", qPrintable(path));
    return file.readAll();
}

} // namespace

QByteArray SandboxDriverPayload::driverSource() {
    static const QByteArray source = resource(QStringLiteral(":/loopscope/sandbox_driver.py"));
    return source;
}

QByteArray SandboxDriverPayload::zygoteSource() {
    static const QByteArray source = resource(QStringLiteral(":/loopscope/sandbox_zygote.py"));
    return source;
}

SandboxDriverPayload SandboxDriverPayload::forPython(const QString &pythonPath) {
    static QHash<QString, SandboxDriverPayload> cache;
    static QMutex mutex;
    QMutexLocker lock(&mutex);
    const auto found = cache.constFind(pythonPath);
    if (found != cache.constEnd())
        return *found;
    SandboxDriverPayload payload;
    payload.frame = "S" + driverSource();
    QProcess python;
    python.setProcessEnvironment(QProcessEnvironment());
    python.start(
        pythonPath,
        {QStringLiteral("-I"), QStringLiteral("-S"), QStringLiteral("-c"),
         QStringLiteral("import json,marshal,site,sys\n"
                        "code=marshal.dumps(compile(sys.stdin.buffer.read(),"
                        "'<loopscope-driver>','exec'))\n"
                        "paths=json.dumps([p for p in site.getsitepackages()]).encode()\n"
                        "sys.stdout.buffer.write(len(code).to_bytes(4,'big')+code+paths)")});
    python.write(driverSource());
    python.closeWriteChannel();
    if (python.waitForFinished(30000) && python.exitStatus() == QProcess::NormalExit &&
        python.exitCode() == 0) {
        const QByteArray out = python.readAllStandardOutput();
        const qint64 size = out.size() >= 4 ? qFromBigEndian<quint32>(out.constData()) : -1;
        if (size > 0 && 4 + size <= out.size()) {
            payload.frame = "M" + out.mid(4, size);
            payload.sitePackages = QJsonDocument::fromJson(out.mid(4 + size)).array();
        }
    } else {
        python.kill();
        python.waitForFinished(1000);
        qCWarning(lcLocalSandbox) << "could not precompile the sandbox driver; sending its source";
    }
    cache.insert(pythonPath, payload);
    return payload;
}

} // namespace loopscope
