#include "common/heaptrimmer.h"

#include "common/threadniceness.h"

#include <QFile>
#include <QTimer>

#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
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

qint64 HeapTrimmer::residentFreeBytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    // statm: size resident shared … in pages; resident − shared is the anonymous part.
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly))
        return -1;
    const QList<QByteArray> pages = statm.readAll().split(' ');
    if (pages.size() < 3)
        return -1;
    const qint64 pageSize = ::sysconf(_SC_PAGESIZE);
    const qint64 anonymous = (pages[1].toLongLong() - pages[2].toLongLong()) * pageSize;
    const struct mallinfo2 info = mallinfo2();
    return qMax<qint64>(0, anonymous - qint64(info.uordblks) - qint64(info.hblkhd));
#else
    return -1;
#endif
}

void HeapTrimmer::trimNow() {
#if defined(__GLIBC__)
    ::malloc_trim(0);
#endif
}

bool HeapTrimmer::trimIfWorthIt() {
    const qint64 free = residentFreeBytes();
    if (free < 0)
        return false;
    m_floorBytes = qMin(m_floorBytes, free);
    if (free - m_floorBytes < m_minFreeBytes)
        return false;
#if defined(__GLIBC__)
    ::malloc_trim(0);
    ++m_trims;
    m_floorBytes = qMax<qint64>(0, residentFreeBytes());
    return true;
#else
    return false;
#endif
}

} // namespace loopscope
