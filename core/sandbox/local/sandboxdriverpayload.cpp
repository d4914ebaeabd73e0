#include "sandbox/local/sandboxdriverpayload.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFile>
#include <QHash>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMutex>
#include <QProcess>
#include <QPromise>
#include <QThreadPool>
#include <QtEndian>

#include <atomic>
#include <memory>
#include <mutex>

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

// Set when the application is being destroyed: a compile still running then is killed.
std::atomic<bool> compilesStopping{false};

SandboxDriverPayload compile(const QString &pythonPath) {
    SandboxDriverPayload payload;
    payload.frame = "S" + SandboxDriverPayload::driverSource();
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
    python.write(SandboxDriverPayload::driverSource());
    python.closeWriteChannel();
    // In short waits, so that an application quitting meanwhile ends the compile at once.
    const QDeadlineTimer deadline(30000);
    while (python.state() != QProcess::NotRunning && !deadline.hasExpired() &&
           !compilesStopping.load())
        python.waitForFinished(50);
    if (python.state() == QProcess::NotRunning && python.error() != QProcess::FailedToStart &&
        python.exitStatus() == QProcess::NormalExit && python.exitCode() == 0) {
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
    return payload;
}

// One path's compile: whoever comes first (prepare()'s thread, or a worker calling
// forPython()) runs it under `once`; the others wait for that one, never for a queued task.
struct Compiled {
    QString pythonPath;
    std::function<void()> beforeCompile;
    std::once_flag once;
    SandboxDriverPayload payload;
    QPromise<SandboxDriverPayload> promise;
    QFuture<SandboxDriverPayload> future;

    const SandboxDriverPayload &get() {
        std::call_once(once, [this] {
            if (beforeCompile)
                beforeCompile();
            payload = compile(pythonPath);
            promise.addResult(payload);
            promise.finish();
        });
        return payload;
    }
};

Q_GLOBAL_STATIC(QThreadPool, compilePool)

// A compile must not outlive the application: left to the pool's static destructor (after
// main() returned, Qt's own statics already gone) a compile still waiting on its interpreter
// corrupts the heap, as a proxy that fails to listen showed. Stopped and joined while the
// application object is destroyed instead.
void stopCompiles() {
    compilesStopping.store(true);
    compilePool()->waitForDone();
}

// The map's lock is held for a lookup only, never across a compile.
QMutex compiledMutex;
QHash<QString, std::shared_ptr<Compiled>> compiledByPath;

std::shared_ptr<Compiled> compiledFor(const QString &pythonPath,
                                      std::function<void()> beforeCompile, bool *isNew) {
    QMutexLocker lock(&compiledMutex);
    std::shared_ptr<Compiled> &slot = compiledByPath[pythonPath];
    *isNew = !slot;
    if (!slot) {
        slot = std::make_shared<Compiled>();
        slot->pythonPath = pythonPath;
        slot->beforeCompile = std::move(beforeCompile);
        slot->promise.start();
        slot->future = slot->promise.future();
    }
    return slot;
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

QFuture<SandboxDriverPayload> SandboxDriverPayload::prepare(const QString &pythonPath,
                                                            std::function<void()> beforeCompile) {
    bool isNew = false;
    const std::shared_ptr<Compiled> compiled =
        compiledFor(pythonPath, std::move(beforeCompile), &isNew);
    if (isNew) {
        static std::once_flag hooked;
        std::call_once(hooked, [] { qAddPostRoutine(stopCompiles); });
        // A pool of its own, not the global one: a global pool full of self-tests waiting on
        // bwrap must not queue the first sandbox behind them.
        compilePool()->start([compiled] { compiled->get(); });
    }
    return compiled->future;
}

SandboxDriverPayload SandboxDriverPayload::forPython(const QString &pythonPath) {
    bool isNew = false;
    return compiledFor(pythonPath, {}, &isNew)->get();
}

void SandboxDriverPayload::forgetForTests() {
    QMutexLocker lock(&compiledMutex);
    compiledByPath.clear();
}

} // namespace loopscope
