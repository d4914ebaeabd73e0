#include "models/flowqueryclient.h"

#include "record/flowstore.h"

namespace loopscope {

FlowQueryClient::FlowQueryClient(QObject *parent)
    : QObject(parent) {
    // Two readers: a long search does not hold up the selected flow's detail.
    m_pool.setMaxThreadCount(2);
    m_pool.setObjectName(QStringLiteral("loopscope-window-reads"));
}

FlowQueryClient::~FlowQueryClient() {
    m_pool.waitForDone();
}

void FlowQueryClient::setFlowStore(FlowStore *store) {
    m_store = store;
}

void FlowQueryClient::waitForIdle() {
    m_pool.waitForDone();
}

QFuture<QJsonObject> FlowQueryClient::list(const FlowFilter &filter) {
    return submit<QJsonObject>([filter](const FlowQuery &q) { return q.list(filter); });
}

QFuture<QJsonObject> FlowQueryClient::flow(const QString &id) {
    return submit<QJsonObject>(
        [id](const FlowQuery &q) { return q.flow(id).value_or(QJsonObject()); });
}

QFuture<QJsonArray> FlowQueryClient::runs(int limit) {
    return submit<QJsonArray>([limit](const FlowQuery &q) { return q.runs(limit); });
}

QFuture<QJsonObject> FlowQueryClient::run(const QString &id) {
    return submit<QJsonObject>(
        [id](const FlowQuery &q) { return q.run(id).value_or(QJsonObject()); });
}

QFuture<QJsonArray> FlowQueryClient::runsWithFlows(int limit) {
    return submit<QJsonArray>([limit](const FlowQuery &q) {
        QJsonArray out;
        for (const QJsonValue &v : q.runs(limit)) {
            QJsonObject run = v.toObject();
            FlowFilter filter;
            filter.runId = run.value(QStringLiteral("id")).toString();
            filter.limit = 1000;
            const QJsonArray newestFirst = q.list(filter).value(QStringLiteral("data")).toArray();
            QJsonArray inOrder;
            for (qsizetype i = newestFirst.size() - 1; i >= 0; --i)
                inOrder.append(newestFirst.at(i));
            run.insert(QStringLiteral("flow_summaries"), inOrder);
            out.append(run);
        }
        return out;
    });
}

QFuture<int> FlowQueryClient::count() {
    return submit<int>([](const FlowQuery &q) { return q.count(); });
}

QFuture<QList<QJsonObject>> FlowQueryClient::flows(const QStringList &ids, const QString &runId) {
    return submit<QList<QJsonObject>>(
        [ids, runId](const FlowQuery &q) { return q.flows(ids, runId); });
}

} // namespace loopscope
