#pragma once

#include <QList>

#include <functional>
#include <memory>

namespace loopscope {

// A stop request shared by whoever started some work and the layers doing it (the loop, the
// plan, the sandbox registry and backend, the upstream call): cancel() runs every handler once,
// and a handler added afterwards runs at once. Handlers stay until the token goes, so each must
// be harmless once its own step is over (guard with a QPointer or an id). Not thread-safe: one
// thread (the proxy thread) cancels and adds.
class Cancellation {
public:
    static std::shared_ptr<Cancellation> create() { return std::make_shared<Cancellation>(); }

    void cancel();
    bool isCancelled() const { return m_cancelled; }
    void onCancel(std::function<void()> handler);

private:
    bool m_cancelled = false;
    QList<std::function<void()>> m_handlers;
};

using CancellationToken = std::shared_ptr<Cancellation>;

} // namespace loopscope
