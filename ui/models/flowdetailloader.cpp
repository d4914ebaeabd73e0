#include "models/flowdetailloader.h"

#include "common/futurechain.h"
#include "models/flowqueryclient.h"
#include "record/flowstore.h"
#include "record/flowsummarymailbox.h"

#include <QTimer>

namespace loopscope {

FlowDetailLoader::FlowDetailLoader(FlowQueryClient *client, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_throttle(new QTimer(this)) {
    m_throttle->setSingleShot(true);
    m_throttle->setInterval(kReloadIntervalMs);
    connect(m_throttle, &QTimer::timeout, this, [this] {
        if (m_pending && !m_busy)
            start();
    });
}

void FlowDetailLoader::setFlowStore(FlowStore *store) {
    if (m_store == store)
        return;
    delete m_summaries;
    m_store = store;
    if (!store)
        return;
    m_summaries = new FlowSummaryMailbox(store, this);
    connect(m_summaries, &FlowSummaryMailbox::flowUpdated, this, &FlowDetailLoader::onStoreChanged);
    connect(m_summaries, &FlowSummaryMailbox::flowFinished, this,
            &FlowDetailLoader::onStoreChanged);
    connect(m_summaries, &FlowSummaryMailbox::flowStarted, this, &FlowDetailLoader::onStoreChanged);
}

void FlowDetailLoader::load(const QString &id) {
    ++m_generation;
    m_id = id;
    m_flow = {};
    m_throttle->stop(); // a new selection is not throttled by the old one's reloads
    m_pending = !id.isEmpty();
    if (id.isEmpty()) {
        emit flowLoaded({});
        return;
    }
    if (!m_busy)
        start();
}

void FlowDetailLoader::reload() {
    if (m_id.isEmpty())
        return;
    m_pending = true;
    if (!m_busy && !m_throttle->isActive())
        start();
}

void FlowDetailLoader::onStoreChanged(const QJsonObject &summary) {
    if (!m_id.isEmpty() && summary.value(QStringLiteral("id")).toString() == m_id)
        reload();
}

void FlowDetailLoader::start() {
    m_pending = false;
    m_busy = true;
    ++m_loadsStarted;
    m_throttle->start(); // the next reload starts no sooner than kReloadIntervalMs from now
    const quint64 generation = m_generation;
    whenFinished(m_client->flow(m_id), this, [this, generation](const QFuture<QJsonObject> &f) {
        m_busy = false;
        const bool current = generation == m_generation;
        if (current) {
            m_flow = resultOr(f, QJsonObject());
            emit flowLoaded(m_flow);
        }
        // A newer selection waited for this load: it goes now. A change of the same flow
        // goes when the throttle allows (its timeout starts it otherwise).
        if (m_pending && (!current || !m_throttle->isActive()))
            start();
    });
}

} // namespace loopscope
