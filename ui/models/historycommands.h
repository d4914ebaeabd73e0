#pragma once

#include <QFuture>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

namespace loopscope {

class FlowQueryClient;
class FlowStore;

// The window's actions on the flow history, without the window: HAR export and import, clear,
// delete, and the client request body "Edit and resend" starts from. Each reads, encodes and
// writes on the FlowQueryClient's pool (never the GUI thread, never Qt's global pool: see
// FlowQueryClient::submit) and answers with a future the caller continues with whenFinished.
// The window only asks the user, triggers these and shows what they answer (MainWindow);
// tests/models/tst_historycommands runs them against a real in-memory store.
class HistoryCommands : public QObject {
    Q_OBJECT
public:
    // How many flows an export, import, clear or delete touched, or why it failed (then
    // `count` is 0 and nothing was changed).
    struct Result {
        int count = 0;
        QString error;
        bool ok() const { return error.isEmpty(); }
    };

    // `client`'s store is the history acted on (none: every action answers an error or 0).
    explicit HistoryCommands(FlowQueryClient *client, QObject *parent = nullptr);

    // The flows named by `ids`, else those of `runId`, else all, as one HAR file at `path`
    // (written whole or not at all); `baseUrl` is the proxy the entries were sent to.
    QFuture<Result> exportHar(const QStringList &ids, const QString &runId, const QString &path,
                              const QString &baseUrl, const QString &appVersion);
    // A HAR file's entries into the history as imported flows; a bad file changes nothing.
    QFuture<Result> importHar(const QString &path);
    // Stored plus running flows (what Clear asks about).
    QFuture<int> count();
    // Empties the history; the count of flows removed.
    QFuture<Result> clear();
    // One stored flow; count 1 when it was removed, else an error.
    QFuture<Result> remove(const QString &flowId);
    // The client request body of a stored flow (Edit and resend), or an error naming why none.
    QFuture<QJsonObject> clientRequestBody(const QString &flowId);

    // The body of a flow's client_request hop (an empty object when it has none).
    static QJsonObject clientRequestBodyOf(const QJsonObject &flow);

private:
    QPointer<FlowQueryClient> m_client;
};

} // namespace loopscope
