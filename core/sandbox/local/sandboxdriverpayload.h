#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QString>

namespace loopscope {

// The Python that runs in local sandboxes, as it ships inside the binary (resources/): the
// driver (one per sandbox interpreter) and the zygote that forks sandboxes.
struct SandboxDriverPayload {
    QByteArray frame;        // "M" + the driver's marshalled code, or "S" + its source
    QJsonArray sitePackages; // put on sys.path by the driver (the interpreter runs with -S)

    // The driver for `pythonPath`: compiled and marshalled once by that same interpreter on the
    // host (it only compiles our own source; no user code is involved), so each sandbox start
    // skips the compile. Also asks it for its site-packages directories. Falls back to the
    // source and no extra paths if that fails. Blocks the first caller for ~50 ms once per path.
    static SandboxDriverPayload forPython(const QString &pythonPath);
    // The sources, from the resources.
    static QByteArray driverSource();
    static QByteArray zygoteSource();
};

} // namespace loopscope
