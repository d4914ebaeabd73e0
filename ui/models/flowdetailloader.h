#pragma once

#include "record/flowstore.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>

class QTimer;

namespace loopscope {

class FlowSummaryMailbox;

class FlowQueryClient;

// Loads the selected flow (FlowQuery::flow JSON, summary + hops) on a worker and keeps it
// fresh: when the store says that flow changed (flowUpdated/flowFinished) it reloads, coalesced
// to at most one load per kReloadIntervalMs, never two loads at once, and a result for an
// older selection is dropped. Every detail panel's setFlow() is fed from flowLoaded.
class FlowDetailLoader : public QObject {
    Q_OBJECT
public:
    static constexpr int kReloadIntervalMs = 100;

    // `client` is not owned (its store is the one watched; call setFlowStore after changing it).
    explicit FlowDetailLoader(FlowQueryClient *client, QObject *parent = nullptr);

    // Follows the store's change signals (null: none). FlowQueryClient::setFlowStore is the
    // caller's business; MainWindow sets both.
    void setFlowStore(FlowStore *store);

    QString currentId() const { return m_id; }
    // The last flow delivered for the current id (empty before the first load).
    QJsonObject currentFlow() const { return m_flow; }
    bool isLoading() const { return m_busy; }
    int loadsStarted() const { return m_loadsStarted; }

public slots:
    // Loads `id` now (an empty id clears: flowLoaded({}) at once).
    void load(const QString &id);
    // Loads the current id again (coalesced like a store change).
    void reload();

signals:
    // The full flow of the current id; {} when cleared or when the id is unknown to the store.
    void flowLoaded(const QJsonObject &flow);

private:
    void onStoreChanged(const QJsonObject &summary);
    void start();

    FlowQueryClient *m_client;
    QPointer<FlowStore> m_store;
    QPointer<FlowSummaryMailbox> m_summaries; // the store's summaries, one per flow while busy
    QTimer *m_throttle;
    QString m_id;
    QJsonObject m_flow;
    quint64 m_generation = 0; // bumped by load(): older answers are dropped
    bool m_busy = false;      // a load (of any id) is running: the next one waits for it
    bool m_pending = false;   // the current id wants a (re)load
    int m_loadsStarted = 0;
};

} // namespace loopscope
