#pragma once

#include "record/flowstore.h"

#include <QFuture>
#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QPromise>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <optional>

namespace loopscope {

// The window's asynchronous door to FlowQuery: every call runs on this client's own small
// thread pool (each pool thread gets its own SQLite read connection) and returns a QFuture the
// caller continues with whenFinished (common/futurechain.h), so the GUI thread never waits on
// SQLite. Without a store every future finishes at once with an empty answer. The store must
// outlive the client; the destructor waits for queries still running.
class FlowQueryClient : public QObject {
    Q_OBJECT
public:
    explicit FlowQueryClient(QObject *parent = nullptr);
    ~FlowQueryClient() override;

    void setFlowStore(FlowStore *store);
    FlowStore *flowStore() const { return m_store; }

    // FlowQuery::list: {"object":"list","data":[…],"has_more":bool}.
    QFuture<QJsonObject> list(const FlowFilter &filter);
    // FlowQuery::flow: the full flow, or an empty object for an unknown id.
    QFuture<QJsonObject> flow(const QString &id);
    QFuture<QJsonArray> runs(int limit = 50);
    // FlowQuery::run: the run object, or an empty object for an unknown id.
    QFuture<QJsonObject> run(const QString &id);
    // Spec run objects (most recently active first), each with "flow_summaries": the summaries
    // of its flows in the order they started (one read for the whole Runs view).
    QFuture<QJsonArray> runsWithFlows(int limit = 50);
    // FlowQuery::count: stored plus running flows.
    QFuture<int> count();
    // FlowQuery::flows: full flows (HAR export), oldest first.
    QFuture<QList<QJsonObject>> flows(const QStringList &ids, const QString &runId);

    // Any other read: `work(const FlowQuery &)` on this client's pool (never on the global
    // one: a pool thread keeps a read connection of the store until it ends, so it must end
    // before the store does, which this client's destructor ensures).
    template<class T, class F> QFuture<T> submit(F work) {
        const FlowQuery *query = m_store ? m_store->query() : nullptr;
        if (!query) {
            QPromise<T> promise;
            promise.start();
            promise.addResult(T{});
            promise.finish();
            return promise.future();
        }
        return QtConcurrent::run(&m_pool, [query, work = std::move(work)] { return work(*query); });
    }

    // Waits until every query started so far is done (tests, shutdown).
    void waitForIdle();

private:
    QPointer<FlowStore> m_store;
    QThreadPool m_pool;
};

} // namespace loopscope
