#include "inspect/eventbus.h"

#include <QDateTime>
#include <QMutexLocker>
#include <QThread>

#include <chrono>

namespace loopscope {

namespace {

using Kind = InspectorEvent::Kind;

// Streams held at once; past it (runs that never reported their end) they are forgotten.
constexpr qsizetype kMaxHeldStreams = 1024;

QString heldKey(const QString &requestId, const QString &callId, const QString &stream) {
    return requestId + QChar(0x1f) + callId + QChar(0x1f) + stream;
}

QString heldPrefix(const QString &requestId) {
    return requestId + QChar(0x1f);
}

} // namespace

EventBus::EventBus(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<loopscope::InspectorEvent>();
}

EventBus::~EventBus() {
    {
        std::lock_guard lock(m_laneMutex);
        m_laneStopping = true;
    }
    m_laneWork.notify_all();
    if (m_laneThread)
        m_laneThread->wait(); // it publishes every queued task before it ends
}

InspectorEvent EventBus::publish(InspectorEvent event) {
    return publish(std::move(event), Masked());
}

InspectorEvent EventBus::publish(InspectorEvent event, const Masked &masked) {
    // Behind deferred events still waiting, to keep one order (not on the lane's own thread:
    // it is publishing them in that order).
    if (m_lanePending.load(std::memory_order_acquire) > 0) {
        std::unique_lock lock(m_laneMutex);
        if (m_lanePending.load(std::memory_order_relaxed) > 0 && !onLaneThread()) {
            if (event.timestampMs == 0) // when it happened, not when the lane gets to it
                event.timestampMs = QDateTime::currentMSecsSinceEpoch();
            enqueueLocked([this, event, masked] { publishNow(event, masked); });
            return event;
        }
    }
    return publishNow(std::move(event), masked);
}

void EventBus::publishDeferred(std::vector<std::function<InspectorEvent()>> builds) {
    if (builds.empty())
        return;
    std::unique_lock lock(m_laneMutex);
    while (m_lanePending.load(std::memory_order_relaxed) >= kMaxDeferred && !m_laneStopping &&
           !onLaneThread()) {
        m_laneWork.notify_one();
        m_laneState.wait(lock);
    }
    // Stamped with the time they were handed over, not the time the lane got to them (a flow
    // starts when its request came, not up to a nap later).
    const qint64 at = QDateTime::currentMSecsSinceEpoch();
    for (auto &build : builds)
        enqueueLocked([this, build = std::move(build), at] {
            InspectorEvent event = build();
            if (event.timestampMs == 0)
                event.timestampMs = at;
            publishNow(std::move(event), Masked());
        });
}

void EventBus::waitForDeferred() {
    std::unique_lock lock(m_laneMutex);
    if (onLaneThread())
        return;
    while (m_lanePending.load(std::memory_order_relaxed) > 0) {
        m_laneWork.notify_one(); // not left to the end of a nap
        m_laneState.wait(lock);
    }
}

bool EventBus::onLaneThread() const {
    return m_laneThread && QThread::currentThread() == m_laneThread.get();
}

void EventBus::enqueueLocked(std::function<void()> task) {
    if (!m_laneThread) {
        m_laneThread.reset(QThread::create([this] { runLane(); }));
        m_laneThread->setObjectName(QStringLiteral("loopscope-events"));
        m_laneThread->start();
    }
    m_laneTasks.push_back(std::move(task));
    m_lanePending.fetch_add(1, std::memory_order_acq_rel);
    // Only a lane asleep for good is woken: a wake-up is a futex call on this thread (the
    // proxy thread, once per exchange, was 9 % of its time), and a napping lane comes back
    // for the task by itself.
    if (m_laneAsleep)
        m_laneWork.notify_one();
}

void EventBus::runLane() {
    std::unique_lock lock(m_laneMutex);
    bool napped = false; // the last wait was a nap that found nothing
    for (;;) {
        while (m_laneTasks.empty() && !m_laneStopping) {
            // After work, a short nap: what is published meanwhile needs no wake-up. After
            // a nap that found nothing, sleep until woken.
            if (!napped) {
                napped = m_laneWork.wait_for(lock, std::chrono::milliseconds(kLaneNapMs)) ==
                         std::cv_status::timeout;
            } else {
                m_laneAsleep = true;
                m_laneWork.wait(lock);
                m_laneAsleep = false;
            }
        }
        if (m_laneTasks.empty())
            return; // stopping, and everything queued is published
        napped = false;
        // The whole batch at once: one lock for all of it.
        std::deque<std::function<void()>> batch = std::exchange(m_laneTasks, {});
        lock.unlock();
        for (auto &task : batch) {
            task();
            task = nullptr; // what it captured is released before the next
        }
        lock.lock();
        const qsizetype before =
            m_lanePending.fetch_sub(qsizetype(batch.size()), std::memory_order_acq_rel);
        const qsizetype left = before - qsizetype(batch.size());
        if (left == 0 || (before >= kMaxDeferred && left < kMaxDeferred))
            m_laneState.notify_all();
    }
}

InspectorEvent EventBus::publishNow(InspectorEvent event, const Masked &masked) {
    if (event.kind == Kind::CodeRunOutput) {
        if (!holdBackOutput(event))
            return event;
    } else {
        if (event.kind == Kind::CodeExecuted)
            flushHeldOutput(event.requestId, event.data.value(QStringLiteral("callId")).toString(),
                            event.iteration);
        else if (event.kind == Kind::RequestFinished || event.kind == Kind::RequestFailed)
            flushHeldOutput(event.requestId, {}, event.iteration);
        event.data = m_credentials->maskObject(event.data);
        if (masked.m_generation != 0) {
            const QJsonObject reused = masked.m_generation == m_credentials->generation()
                                           ? masked.m_data
                                           : m_credentials->maskObject(masked.m_data);
            for (auto it = reused.constBegin(); it != reused.constEnd(); ++it)
                event.data.insert(it.key(), it.value());
        }
    }
    return emitStamped(std::move(event));
}

InspectorEvent EventBus::publish(InspectorEvent::Kind kind, const QString &requestId, int iteration,
                                 const QJsonObject &data) {
    return publish(InspectorEvent::make(kind, requestId, iteration, data));
}

InspectorEvent EventBus::publish(InspectorEvent::Kind kind, const QString &requestId, int iteration,
                                 const QJsonObject &data, const Masked &masked) {
    return publish(InspectorEvent::make(kind, requestId, iteration, data), masked);
}

EventBus::Masked EventBus::maskOnce(const QJsonObject &data) const {
    Masked out;
    out.m_generation = m_credentials->generation(); // first: a change while masking is seen
    out.m_data = m_credentials->maskObject(data);
    return out;
}

std::shared_ptr<std::atomic<quint64>> EventBus::dropCounter(const QString &name) {
    QMutexLocker lock(&m_dropMutex);
    auto &counter = m_drops[name];
    if (!counter)
        counter = std::make_shared<std::atomic<quint64>>(0);
    return counter;
}

QHash<QString, quint64> EventBus::droppedEvents() const {
    QMutexLocker lock(&m_dropMutex);
    QHash<QString, quint64> out;
    for (auto it = m_drops.constBegin(); it != m_drops.constEnd(); ++it)
        out.insert(it.key(), it.value()->load(std::memory_order_relaxed));
    return out;
}

InspectorEvent EventBus::emitStamped(InspectorEvent event) {
    event.sequence = m_nextSequence.fetch_add(1, std::memory_order_relaxed);
    if (event.timestampMs == 0) // a deferred event keeps the time it was handed over
        event.timestampMs = QDateTime::currentMSecsSinceEpoch();
    emit eventPublished(event);
    return event;
}

// Joins the chunk to what its stream held, keeps back an end that may begin a secret, and
// masks the rest; false when nothing is left to publish yet.
bool EventBus::holdBackOutput(InspectorEvent &event) {
    const QString key =
        heldKey(event.requestId, event.data.value(QStringLiteral("callId")).toString(),
                event.data.value(QStringLiteral("stream")).toString());
    QString text;
    {
        QMutexLocker lock(&m_heldMutex);
        text = m_held.take(key);
    }
    text += event.data.value(QStringLiteral("text")).toString();
    const CredentialPolicy &policy = *m_credentials;
    const qsizetype cut = policy.safeCut(text, text.size() - policy.holdback(text));
    if (cut < text.size()) {
        QMutexLocker lock(&m_heldMutex);
        if (m_held.size() >= kMaxHeldStreams)
            m_held.clear();
        m_held.insert(key, text.mid(cut));
    }
    if (cut == 0)
        return false;
    event.data.insert(QStringLiteral("text"), text.left(cut));
    event.data = policy.maskObject(event.data);
    return true;
}

// A run's end (or its request's): what its streams still held is published, masked, before it.
void EventBus::flushHeldOutput(const QString &requestId, const QString &callId, int iteration) {
    QList<QPair<QString, QString>> released; // (stream key, text)
    {
        QMutexLocker lock(&m_heldMutex);
        if (m_held.isEmpty())
            return;
        const QString prefix =
            callId.isNull() ? heldPrefix(requestId) : heldPrefix(requestId) + callId + QChar(0x1f);
        for (auto it = m_held.begin(); it != m_held.end();) {
            if (it.key().startsWith(prefix)) {
                released.append({it.key(), it.value()});
                it = m_held.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (const auto &[key, text] : std::as_const(released)) {
        const QStringList parts = key.split(QChar(0x1f));
        if (parts.size() != 3 || text.isEmpty())
            continue;
        emitStamped(
            InspectorEvent::make(Kind::CodeRunOutput, requestId, iteration,
                                 m_credentials->maskObject({{QStringLiteral("callId"), parts.at(1)},
                                                            {QStringLiteral("stream"), parts.at(2)},
                                                            {QStringLiteral("text"), text}})));
    }
}

} // namespace loopscope
