#pragma once

// Helpers shared by the benchmark harnesses (not tests: a failure aborts the run loudly).

#include "common/outcome.h"

#include <QEventLoop>
#include <QFile>
#include <QFuture>
#include <QFutureWatcher>

#include <cstdio>
#include <cstdlib>

namespace loopscope::bench {

// Spins an event loop until `future` is finished, then returns its result.
template<class T> T await(const QFuture<T> &future) {
    if (!future.isFinished()) {
        QEventLoop loop;
        QFutureWatcher<T> watcher;
        QObject::connect(&watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit);
        watcher.setFuture(future);
        if (!future.isFinished())
            loop.exec();
    }
    return future.result();
}

// The value of a successful outcome; a failed one ends the benchmark with its message.
template<class T> T check(const Outcome<T> &outcome, const char *what) {
    if (!outcome.ok()) {
        std::fprintf(stderr, "%s failed: %s\n", what, qPrintable(outcome.error));
        std::exit(1);
    }
    return outcome.value;
}

// This process's resident memory (VmRSS), in KB; 0 where /proc is missing.
inline qint64 rssKb() {
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    return 0;
}

} // namespace loopscope::bench
