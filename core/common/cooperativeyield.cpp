#include "cooperativeyield.h"

#include <QThread>

namespace loopscope {

CooperativeYield::CooperativeYield(Options options)
    : m_options(std::move(options))
    , m_since(std::chrono::steady_clock::now()) {
    if (!m_options.yield)
        m_options.yield = [] { QThread::yieldCurrentThread(); };
}

void CooperativeYield::afterUnitOfWork(qsizetype backlog) {
    if (backlog > m_options.maxBacklog)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (now - m_since < m_options.every || now < m_backOffUntil)
        return;
    m_options.yield();
    ++m_yields;
    m_since = std::chrono::steady_clock::now();
    if (m_since - now > m_options.contended) {
        m_backOffUntil = m_since + m_options.backOff;
        ++m_backOffs;
    }
}

} // namespace loopscope
