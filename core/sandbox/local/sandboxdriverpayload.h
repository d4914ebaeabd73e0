#pragma once

#include <QByteArray>
#include <QFuture>
#include <QJsonArray>
#include <QString>

#include <functional>

namespace loopscope {

// The Python that runs in local sandboxes, as it ships inside the binary (resources/): the
// driver (one per sandbox interpreter) and the zygote that forks sandboxes.
struct SandboxDriverPayload {
    QByteArray frame;        // "M" + the driver's marshalled code, or "S" + its source
    QJsonArray sitePackages; // put on sys.path by the driver (the interpreter runs with -S)

    // The driver for `pythonPath`: compiled and marshalled once per path by that same
    // interpreter on the host (it only compiles our own source; no user code is involved), so
    // each sandbox start skips the compile. Also asks it for its site-packages directories.
    // Falls back to the source and no extra paths if that fails (it waits up to 30 s for a
    // hung interpreter).
    //
    // prepare() starts that compile on a thread of its own and returns at once; the future
    // finishes there (attach with whenFinished). The backend calls it when it is made and
    // starts no interpreter before it finished, so the proxy thread never waits for it.
    // `beforeCompile` is a test seam run on that thread first (only by the call that starts
    // the compile).
    static QFuture<SandboxDriverPayload> prepare(const QString &pythonPath,
                                                 std::function<void()> beforeCompile = {});
    // The same, waiting for it: at once once prepare()'s future finished; otherwise only on a
    // worker (the self-test's probe) or in tests, where it compiles in the calling thread if
    // no one has started to.
    static SandboxDriverPayload forPython(const QString &pythonPath);
    // Tests: forget every compiled payload, so the next prepare() compiles again.
    static void forgetForTests();
    // The sources, from the resources.
    static QByteArray driverSource();
    static QByteArray zygoteSource();
};

} // namespace loopscope
