#pragma once

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <QPromise>

#include <memory>
#include <utility>

namespace loopscope {

// Continuations run on `owner`'s thread once `future` finishes (also when it is cancelled).
// A QFutureWatcher parented to `owner` is used instead of QFuture::then(context, ...), which
// asserts in Qt 6.4 when the context dies first: if `owner` goes away, the continuation is
// dropped and any QPromise it captured cancels its future. Returns the watcher (owned by
// `owner`, deleted after the call).
template<class T, class F>
QFutureWatcher<T> *whenFinished(const QFuture<T> &future, QObject *owner, F onFinished) {
    auto *watcher = new QFutureWatcher<T>(owner);
    QObject::connect(watcher, &QFutureWatcherBase::finished, owner,
                     [watcher, onFinished = std::move(onFinished)]() mutable {
                         onFinished(watcher->future());
                         watcher->deleteLater();
                     });
    watcher->setFuture(future);
    return watcher;
}

// A started promise shared by the steps of one asynchronous operation.
template<class T> std::shared_ptr<QPromise<T>> startedPromise() {
    auto promise = std::make_shared<QPromise<T>>();
    promise->start();
    return promise;
}

template<class T> void finishPromise(const std::shared_ptr<QPromise<T>> &promise, T value) {
    promise->addResult(std::move(value));
    promise->finish();
}

// The value of a finished future, or `fallback` when it was cancelled or produced nothing.
template<class T> T resultOr(const QFuture<T> &future, T fallback) {
    if (future.isCanceled() || future.resultCount() == 0)
        return fallback;
    return future.result();
}

} // namespace loopscope
