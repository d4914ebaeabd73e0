#include "common/cancellation.h"

#include <utility>

namespace loopscope {

void Cancellation::cancel() {
    if (m_cancelled)
        return;
    m_cancelled = true;
    // A handler may add another (a step that starts the next one): that runs at once, below.
    const QList<std::function<void()>> handlers = std::exchange(m_handlers, {});
    for (const auto &handler : handlers)
        handler();
}

void Cancellation::onCancel(std::function<void()> handler) {
    if (!handler)
        return;
    if (m_cancelled)
        handler();
    else
        m_handlers.append(std::move(handler));
}

} // namespace loopscope
