#pragma once

#include <QCoreApplication>
#include <QEventLoop>
#include <QFuture>
#include <QFutureWatcher>
#include <QTimer>

#include <cstdio>
#include <cstdlib>

namespace loopscope {

// Spins the event loop until `future` finishes or `timeoutMs` passes. Queued continuations and
// QFutureWatcher signals need a running loop, so a plain waitForFinished() would deadlock.
// Returns whether the future finished in time (use with QVERIFY).
template<class T> bool waitForFuture(const QFuture<T> &future, int timeoutMs = 10000) {
    if (!future.isFinished()) {
        QEventLoop loop;
        QFutureWatcher<T> watcher;
        QTimer timeout;
        timeout.setSingleShot(true);
        QObject::connect(&watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit);
        QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
        watcher.setFuture(future);
        timeout.start(timeoutMs);
        if (!future.isFinished())
            loop.exec();
    }
    // Let continuations queued by the finishing future (then(context, ...)) run too.
    QCoreApplication::processEvents();
    return future.isFinished();
}

// Waits like waitForFuture and returns the result. A future that never finishes is a test
// bug or a hang in the code under test: abort loudly instead of returning a made-up value.
template<class T> T awaitFuture(const QFuture<T> &future, int timeoutMs = 10000) {
    if (!waitForFuture(future, timeoutMs)) {
        std::fprintf(stderr, "awaitFuture: future did not finish within %d ms\n", timeoutMs);
        std::abort();
    }
    if (future.isCanceled() || future.resultCount() == 0) {
        std::fprintf(stderr, "awaitFuture: future finished without a result (cancelled)\n");
        std::abort();
    }
    return future.result();
}

inline void awaitFuture(const QFuture<void> &future, int timeoutMs = 10000) {
    if (!waitForFuture(future, timeoutMs)) {
        std::fprintf(stderr, "awaitFuture: future did not finish within %d ms\n", timeoutMs);
        std::abort();
    }
}

} // namespace loopscope
