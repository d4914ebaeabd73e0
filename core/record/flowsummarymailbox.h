#pragma once

#include <memory>

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QMutex>
#include <QObject>

namespace loopscope {

class FlowStore;

// The store's flow summaries (FlowStore::flowStarted/Updated/Finished, emitted on the store
// thread) handed to one receiver on its own thread, bounded by the flows rather than by the
// changes: a flow's newer summary replaces the one still waiting, and one queued call delivers
// every waiting flow, in the order they first changed. A receiver that is busy for a while (a
// window during a burst) thus gets one call and one summary per flow instead of a posted call per
// change. A flow that started while waiting is still delivered as started (with its latest
// summary), one that finished as finished.
//
// Lives on the receiver's thread; its signals are emitted there.
class FlowSummaryMailbox : public QObject {
    Q_OBJECT
public:
    enum class Change { Started, Updated, Finished };

    explicit FlowSummaryMailbox(FlowStore *store, QObject *parent = nullptr);
    // For tests and other sources: no store, changes come through post().
    explicit FlowSummaryMailbox(QObject *parent = nullptr);
    ~FlowSummaryMailbox() override;

    // Thread-safe.
    void post(Change change, const QJsonObject &summary);
    // Flows waiting to be delivered (thread-safe).
    qsizetype pendingFlows() const;

signals:
    void flowStarted(const QJsonObject &summary);
    void flowUpdated(const QJsonObject &summary);
    void flowFinished(const QJsonObject &summary);

private:
    struct Pending {
        QJsonObject summary;
        bool started = false;
        bool finished = false;
    };
    // Shared with the store-thread connections, which may outlive this object by one call:
    // `owner` is cleared (under the mutex) before it goes.
    struct Shared {
        mutable QMutex mutex;
        FlowSummaryMailbox *owner = nullptr;
        QList<QString> order;
        QHash<QString, Pending> pending;
    };
    static void postTo(Shared &shared, Change change, const QJsonObject &summary);
    void deliver();

    std::shared_ptr<Shared> m_shared;
    QList<QMetaObject::Connection> m_connections;
};

} // namespace loopscope
