#include "record/flowsummarymailbox.h"

#include "record/flowstore.h"

#include <QMutexLocker>
#include <QPointer>

namespace loopscope {

FlowSummaryMailbox::FlowSummaryMailbox(QObject *parent)
    : QObject(parent)
    , m_shared(std::make_shared<Shared>()) {
    m_shared->owner = this;
}

FlowSummaryMailbox::FlowSummaryMailbox(FlowStore *store, QObject *parent)
    : FlowSummaryMailbox(parent) {
    if (!store)
        return;
    // Direct: called on the store thread as the store emits; the lambdas hold the shared state,
    // not this object.
    const auto forward = [this, store](auto signal, Change change) {
        m_connections.append(connect(
            store, signal, store,
            [shared = m_shared, change](const QJsonObject &s) { postTo(*shared, change, s); },
            Qt::DirectConnection));
    };
    forward(&FlowStore::flowStarted, Change::Started);
    forward(&FlowStore::flowUpdated, Change::Updated);
    forward(&FlowStore::flowFinished, Change::Finished);
}

FlowSummaryMailbox::~FlowSummaryMailbox() {
    for (const QMetaObject::Connection &c : std::as_const(m_connections))
        disconnect(c);
    QMutexLocker lock(&m_shared->mutex);
    m_shared->owner = nullptr; // a call already past disconnect posts nothing
}

void FlowSummaryMailbox::post(Change change, const QJsonObject &summary) {
    postTo(*m_shared, change, summary);
}

qsizetype FlowSummaryMailbox::pendingFlows() const {
    QMutexLocker lock(&m_shared->mutex);
    return m_shared->pending.size();
}

void FlowSummaryMailbox::postTo(Shared &shared, Change change, const QJsonObject &summary) {
    const QString id = summary.value(QLatin1String("id")).toString();
    QMutexLocker lock(&shared.mutex);
    if (!shared.owner)
        return;
    const bool wasEmpty = shared.pending.isEmpty();
    auto it = shared.pending.find(id);
    if (it == shared.pending.end()) {
        it = shared.pending.insert(id, Pending{});
        shared.order.append(id);
    }
    it->summary = summary;
    it->started = it->started || change == Change::Started;
    it->finished = it->finished || change == Change::Finished;
    if (wasEmpty) {
        // Posted under the mutex: the owner cannot be destroyed meanwhile, and a destroyed
        // owner's posted call is discarded with it.
        FlowSummaryMailbox *owner = shared.owner;
        QMetaObject::invokeMethod(
            owner, [owner] { owner->deliver(); }, Qt::QueuedConnection);
    }
}

void FlowSummaryMailbox::deliver() {
    QList<QString> order;
    QHash<QString, Pending> pending;
    {
        QMutexLocker lock(&m_shared->mutex);
        order = std::exchange(m_shared->order, {});
        pending = std::exchange(m_shared->pending, {});
    }
    const QPointer<FlowSummaryMailbox> alive(this); // a receiver may delete us from a slot
    for (const QString &id : std::as_const(order)) {
        const Pending &p = pending[id];
        if (p.started)
            emit flowStarted(p.summary);
        if (!alive)
            return;
        if (p.finished)
            emit flowFinished(p.summary);
        else if (!p.started)
            emit flowUpdated(p.summary);
        if (!alive)
            return;
    }
}

} // namespace loopscope
