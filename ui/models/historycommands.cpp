#include "models/historycommands.h"

#include "models/flowqueryclient.h"

#include "control/harcodec.h"
#include "record/flowquery.h"
#include "record/flowstore.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

namespace loopscope {

namespace {

template<class T> QFuture<T> ready(T value) {
    return QtFuture::makeReadyFuture(std::move(value));
}

HistoryCommands::Result failed(const QString &error) {
    return HistoryCommands::Result{0, error};
}

const QString kNoHistory = QStringLiteral("there is no history (--no-history or not open)");

} // namespace

HistoryCommands::HistoryCommands(FlowQueryClient *client, QObject *parent)
    : QObject(parent)
    , m_client(client) {}

QFuture<HistoryCommands::Result>
HistoryCommands::exportHar(const QStringList &ids, const QString &runId, const QString &path,
                           const QString &baseUrl, const QString &appVersion) {
    if (!m_client || !m_client->flowStore())
        return ready(failed(kNoHistory));
    // Read, encode and write on a worker: "all" may be the whole history.
    return m_client->submit<Result>(
        [ids, runId, path, baseUrl, appVersion](const FlowQuery &query) {
            const QList<QJsonObject> flows = query.flows(ids, runId);
            if (flows.isEmpty())
                return failed(QStringLiteral("No flows to export."));
            const QJsonObject har = HarCodec::exportHar(flows, baseUrl, appVersion);
            QSaveFile file(path);
            if (!file.open(QIODevice::WriteOnly))
                return failed(QStringLiteral("Cannot write %1: %2").arg(path, file.errorString()));
            file.write(QJsonDocument(har).toJson(QJsonDocument::Indented));
            if (!file.commit())
                return failed(QStringLiteral("Cannot write %1: %2").arg(path, file.errorString()));
            return Result{int(flows.size()), {}};
        });
}

QFuture<HistoryCommands::Result> HistoryCommands::importHar(const QString &path) {
    if (!m_client || !m_client->flowStore())
        return ready(failed(kNoHistory));
    const QPointer<FlowStore> store = m_client->flowStore();
    // Parse and store on a worker; a bad file changes nothing.
    return m_client->submit<Result>([store, path](const FlowQuery &) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return failed(QStringLiteral("Cannot read %1: %2").arg(path, file.errorString()));
        const auto flows = HarCodec::importHar(file.readAll());
        if (!flows.ok())
            return failed(flows.error);
        if (!store)
            return failed(QStringLiteral("the history is closed"));
        return Result{store->importFlows(flows.value), {}};
    });
}

QFuture<int> HistoryCommands::count() {
    return m_client ? m_client->count() : ready(0);
}

QFuture<HistoryCommands::Result> HistoryCommands::clear() {
    if (!m_client || !m_client->flowStore())
        return ready(failed(kNoHistory));
    const QPointer<FlowStore> store = m_client->flowStore();
    return m_client->submit<Result>([store](const FlowQuery &) {
        return store ? Result{store->clear(), {}} : failed(QStringLiteral("the history is closed"));
    });
}

QFuture<HistoryCommands::Result> HistoryCommands::remove(const QString &flowId) {
    if (!m_client || !m_client->flowStore())
        return ready(failed(kNoHistory));
    const QPointer<FlowStore> store = m_client->flowStore();
    return m_client->submit<Result>([store, flowId](const FlowQuery &) {
        const int removed = store ? store->remove({flowId}) : 0;
        return removed > 0
                   ? Result{removed, {}}
                   : failed(QStringLiteral("Flow %1 is not in the stored history.").arg(flowId));
    });
}

QFuture<QJsonObject> HistoryCommands::clientRequestBody(const QString &flowId) {
    if (!m_client || !m_client->flowStore())
        return ready(QJsonObject());
    return m_client->submit<QJsonObject>([flowId](const FlowQuery &query) {
        return clientRequestBodyOf(query.flow(flowId).value_or(QJsonObject()));
    });
}

QJsonObject HistoryCommands::clientRequestBodyOf(const QJsonObject &flow) {
    for (const QJsonValue &hop : flow.value(QLatin1String("hops")).toArray()) {
        const QJsonObject h = hop.toObject();
        if (h.value(QLatin1String("kind")).toString() == QLatin1String("client_request"))
            return h.value(QLatin1String("body")).toObject();
    }
    return {};
}

} // namespace loopscope
