#include "common/heaptrimmer.h"

#include <QTimer>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace loopscope {

HeapTrimmer::HeapTrimmer(QObject *parent, int intervalMs, qint64 minFreeBytes)
    : QObject(parent)
    , m_timer(new QTimer(this))
    , m_minFreeBytes(minFreeBytes) {
    // Coarse: an idle app wakes for this once per interval and nothing else.
    m_timer->setTimerType(Qt::VeryCoarseTimer);
    connect(m_timer, &QTimer::timeout, this, &HeapTrimmer::trimIfWorthIt);
    if (intervalMs > 0)
        m_timer->start(intervalMs);
}

qint64 HeapTrimmer::freeHeapBytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    return qint64(mallinfo2().fordblks);
#else
    return -1;
#endif
}

bool HeapTrimmer::trimIfWorthIt() {
    if (freeHeapBytes() < m_minFreeBytes)
        return false;
#if defined(__GLIBC__)
    ::malloc_trim(0);
    ++m_trims;
    return true;
#else
    return false;
#endif
}

} // namespace loopscope
