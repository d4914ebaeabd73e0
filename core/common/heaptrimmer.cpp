#include "common/heaptrimmer.h"

#include "common/threadniceness.h"

#include <QTimer>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace loopscope {

HeapTrimmer::HeapTrimmer(QObject *parent, int intervalMs, qint64 minFreeBytes)
    : QObject(parent)
    , m_minFreeBytes(minFreeBytes) {
    if (intervalMs <= 0)
        return; // trimmed by hand only (tests)
    m_thread.setObjectName(QStringLiteral("loopscope-heaptrim"));
    // The timer lives on the thread and is deleted with its event loop.
    auto *timer = new QTimer;
    // Coarse: an idle app wakes for this once per interval and nothing else.
    timer->setTimerType(Qt::VeryCoarseTimer);
    timer->setInterval(intervalMs);
    timer->moveToThread(&m_thread);
    connect(timer, &QTimer::timeout, timer, [this] { trimIfWorthIt(); });
    connect(&m_thread, &QThread::started, timer, qOverload<>(&QTimer::start));
    connect(
        &m_thread, &QThread::started, this, [] { setCurrentThreadNiceness(19); },
        Qt::DirectConnection);
    connect(&m_thread, &QThread::finished, timer, &QObject::deleteLater);
    m_thread.start(QThread::LowestPriority);
}

HeapTrimmer::~HeapTrimmer() {
    m_thread.quit();
    m_thread.wait();
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
